"""Adebayo et al.'s sanity checks over a dataset (`reproduce --sanity`): what a run stores per example (a compact
record of rcqa.faithfulness.sanity's SanityCheck) and its averages.

Per entry (a method under one ranking) and per step of each series, the mean Spearman ρ with the trained model's
word scores (95 % bootstrap interval over questions; a question whose randomised scores are all equal, ρ undefined,
is left out of the mean), the mean top-k overlap, and the share of questions whose ρ is FAIL_AT or more there. An
entry fails on a question as SanityCheck.fails says: ρ ≥ FAIL_AT at the verdict step (the QA head and every block
randomised, the embeddings as trained); an undefined ρ passes.

The dataset's verdict per entry reads the interval of the mean ρ at the verdict step: it fails where the interval's
low is at least FAIL_AT, passes where its high is under FAIL_AT, and is not clear otherwise (the interval straddles
FAIL_AT, or fewer than two questions define ρ, so there is no interval).
"""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from rcqa.faithfulness.entry import entry_label
from rcqa.faithfulness.sanity import SERIES, SanityCheck
from rcqa.intervals import mean_with_interval


def record(check: SanityCheck) -> str:
    """The row's `sanity` cell (JSON): the checks' numbers without the passage words and module names."""
    return json.dumps({"k": check.k, "fail_at": check.fail_at, "seed": check.seed, "seconds": check.seconds,
                       "methods": list(dict.fromkeys(entry.method for entry in check.entries)),
                       "parts": [part.label for part in check.parts], "verdict_step": check.verdict_step,
                       "entries": {entry.name: {series: {"spearman": found.spearman[series],
                                                         "top_k_overlap": found.top_k_overlap[series]}
                                                for series in SERIES}
                                   for entry, found in check.entries.items()}})


def summarize_sanity(rows: pa.Table, seed: int = 0) -> dict | None:
    """Per entry, per series, per step: the mean ρ with its interval (`spearman`), the mean `top_k_overlap` and the
    share (%) of questions at or above FAIL_AT (`at_or_above`); per entry the share of questions it fails on
    (`failing`, %), the `outcome` of the module's rule and its `verdict` sentence. None when the run stored none."""
    if "sanity" not in rows.column_names:
        return None
    cells = [json.loads(cell) for cell in rows["sanity"].to_pylist() if cell]
    if not cells:
        return None
    first = cells[0]
    fail_at, step = first["fail_at"], first["verdict_step"]
    entries = {}
    for name in first["entries"]:
        found = {series: _steps([c["entries"][name][series] for c in cells], fail_at, seed) for series in SERIES}
        rho = np.array([_defined(c["entries"][name]["cascade"]["spearman"][step]) for c in cells], dtype=float)
        failing = 100 * float(np.mean(rho >= fail_at))  # NaN (undefined ρ) compares false: it passes
        outcome = _outcome(found["cascade"][step]["spearman"], fail_at)
        entries[name] = {"label": entry_label(name), **found, "failing": failing, "outcome": outcome,
                         "verdict": _sentence(name, outcome, found["cascade"][step], failing, len(cells), fail_at,
                                              first["k"])}
    return {"n": len(cells), "k": first["k"], "fail_at": fail_at, "methods": first["methods"],
            "parts": first["parts"], "verdict_step": step, "entries": entries}


def _defined(value: float | None) -> float:
    return np.nan if value is None else value


def _steps(series: list[dict], fail_at: float, seed: int) -> list[dict]:
    """One series' numbers over the questions, step by step."""
    rho = np.array([[_defined(v) for v in s["spearman"]] for s in series], dtype=float)
    overlap = np.array([s["top_k_overlap"] for s in series], dtype=float)
    return [{"spearman": mean_with_interval(rho[:, i], seed + i), "top_k_overlap": float(overlap[:, i].mean()),
             "at_or_above": 100 * float(np.mean(rho[:, i] >= fail_at))} for i in range(rho.shape[1])]


def _outcome(spearman: dict, fail_at: float) -> str:
    """The module's rule on the interval of the mean ρ at the verdict step."""
    if spearman["low"] is None:
        return "not clear"
    if spearman["low"] >= fail_at:
        return "fails"
    return "passes" if spearman["high"] < fail_at else "not clear"


def _sentence(name: str, outcome: str, at_step: dict, failing: float, n: int, fail_at: float, k: int) -> str:
    rho = at_step["spearman"]
    if rho["mean"] is None:
        reading = "its randomised word scores are all equal on every question (ρ undefined)"
    elif rho["low"] is None:
        reading = f"its mean Spearman ρ with the trained model's word scores is {rho['mean']:.2f}, with no interval"
    else:
        reading = (f"its mean Spearman ρ with the trained model's word scores is {rho['mean']:.2f} (95 % interval "
                   f"{rho['low']:.2f} – {rho['high']:.2f}, over {rho['n']} questions)")
    label = entry_label(name)
    head = {"fails": f"{label} fails the sanity check", "passes": f"{label} passes the sanity check",
            "not clear": f"Whether {label} passes the sanity check is not clear"}[outcome]
    told = {"fails": f"at least {fail_at}", "passes": f"under {fail_at}",
            "not clear": f"which does not tell whether it is under {fail_at}"}[outcome]
    return (f"{head} over {n} questions: with the QA head and every block randomised, {reading}, {told}; it fails on "
            f"{failing:.0f} % of the questions, and {100 * at_step['top_k_overlap']:.0f} % of its top-{k} words stay "
            f"in its top {k} on average.")
