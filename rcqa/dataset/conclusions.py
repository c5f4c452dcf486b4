"""The paper's dataset-level conclusions as checks on a run's summary, so two runs (say the paper's code settings
and a baseline whose completeness error is under 1 %) can be asked the same questions.

Early and late are the first and last third of the layers (as in the per-example phase reading), which compares
models of different depth at equal relative depth.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rcqa.dataset.summary import DatasetSummary


@dataclass(frozen=True)
class Verdict:
    claim: str
    holds: bool | None  # None: the run cannot tell (no defined values)
    evidence: str


def thirds(values: list) -> tuple[float, float]:
    """Means of the defined values in the first and last third of the layers (NaN where none is defined)."""
    array = np.array([np.nan if v is None else v for v in values], dtype=float)
    parts = np.array_split(array, 3)
    first, last = (float(np.nanmean(p)) if p.size and (~np.isnan(p)).any() else float("nan")
                   for p in (parts[0], parts[-1]))
    return first, last


def _trend(claim: str, values: list, rises: bool, unit: str = "%", beside: str = "") -> Verdict:
    """Whether the last third's mean is above (or below) the first's, as shown to 0.1: equal there is level, which
    neither rises nor falls."""
    early, late = thirds(values)
    if np.isnan(early) or np.isnan(late):
        return Verdict(claim, None, "undefined in this run")
    shown = round(early, 1), round(late, 1)
    level = shown[0] == shown[1]
    return Verdict(claim, not level and bool(late > early if rises else late < early),
                   f"early layers {early:.1f}{unit}, late layers {late:.1f}{unit}{' (level)' * level}{beside}")


def _query_falls(summary: DatasetSummary) -> Verdict:
    return _trend("Early layers look at the question's words (query share falls with depth)",
                  summary.roles["query"], rises=False)


def _answer_rises(summary: DatasetSummary) -> Verdict:
    """Read on the answer's share of each layer's attribution, as the heatmap shows it: its share of the top-k is
    given beside it, with the ceiling the answer's word count puts on that share (2 words fill at most 40 % of a
    top-5), which a rise or fall of the top-k share cannot pass."""
    claim = "Later layers settle on the answer (the answer's share of the layer's attribution rises with depth)"
    roles = summary.roles
    top = _thirds_text(f"; of the top-{summary.settings.top_k}: ", roles["answer"])
    if "answer_attribution" not in roles:
        return Verdict(claim, None, f"undefined in this run: its rows predate the answer's share of the attribution "
                                    f"(run it again){top}")
    ceiling = _thirds_text(", where its words can fill at most ", roles["answer_ceiling"])
    return _trend(claim, roles["answer_attribution"], rises=True, beside=top + ceiling)


def _thirds_text(lead: str, values: list) -> str:
    """'{lead}39.9% and 38.6%': the first and last third's means, or nothing where either is undefined."""
    early, late = thirds(values)
    return "" if np.isnan(early) or np.isnan(late) else f"{lead}{early:.1f}% and {late:.1f}%"


def _agree_beyond_top(summary: DatasetSummary) -> Verdict:
    claim = "Layers differ in their top words but agree on the rest (max JSD: top-k removed < top-k kept)"
    removed, kept = summary.jsd_range["topk_removed"]["max"], summary.jsd_range["topk_kept"]["max"]
    if removed is None or kept is None:
        return Verdict(claim, None, "undefined in this run")
    return Verdict(claim, removed < kept, f"top-k removed {removed:.3f}, top-k kept {kept:.3f}")


def _numbers_later(summary: DatasetSummary) -> Verdict:
    return _trend("On quantifier questions, later layers look at the passage's numbers (the ratio rises)",
                  summary.quantifier["ratio"], rises=True)


CHECKS: tuple[Callable[[DatasetSummary], Verdict], ...] = (_query_falls, _answer_rises, _agree_beyond_top, _numbers_later)


CORRECT = 50.0  # % EM: "still predict correctly" reads as a majority of the questions answered exactly


def contrast_verdict(contrast: dict) -> Verdict:
    """The paper's quantifier claim under `reproduce --contrast distractor-number`: later layers focus on the other
    numbers (the share of the contrast's top-k that is numbers other than the answer and the distractor is larger in
    the last third of the layers than in the first) but the model still predicts correctly (EM ≥ CORRECT % on those
    questions).

    The distractor's own words are not counted as "other numbers": the distractor is part of the target, so its
    share of the attribution comes from the target by construction (it is given beside the verdict). The last block
    is left out: the QA head reads each token on its own, so there a logit contrast's attribution lands on the two
    spans' tokens alone, and its top-k is the answer and the foil by construction."""
    claim = ("On quantifier questions, later layers focus on the other numbers (numbers that are neither the answer "
             "nor the distractor rise in the contrast's top-k) but still predict correctly")
    shares, em = contrast["shares"], contrast["exact_match"]
    if "other_numbers" not in shares:
        return Verdict(claim, None, "undefined in this run: its rows predate the other numbers' share (run it again)")
    early, late = thirds(shares["other_numbers"][:-1])
    foil_early, foil_late = thirds(shares.get("foil", [])[:-1])
    if np.isnan(early) or np.isnan(late) or em is None:
        return Verdict(claim, None, "undefined in this run")
    return Verdict(claim, bool(late > early and em >= CORRECT),
                   f"other numbers' share early layers {early:.1f}%, late layers {late:.1f}% (the distractor's own "
                   f"words, in the target by construction: {foil_early:.1f}% and {foil_late:.1f}%; the last block, "
                   f"whose top-k holds only the two spans, left out); EM {em:.1f}% over {contrast['n']} questions")


def contrast_statement(contrast: dict) -> str | None:
    """The quantifier claim in one plain sentence for a distractor-number contrast run, else None."""
    if contrast["foil"] != "distractor-number":
        return None
    verdict = contrast_verdict(contrast)
    said = {True: "holds", False: "does not hold", None: "cannot be told"}[verdict.holds]
    return f"The paper's quantifier claim {said} on this model under this test. {verdict.claim}: {verdict.evidence}."


def verdicts(summary: DatasetSummary) -> list[Verdict]:
    """The paper's claims on the run; a distractor-number contrast run adds its quantifier claim."""
    contrast = summary.contrast
    extra = [contrast_verdict(contrast)] if contrast and contrast["foil"] == "distractor-number" else []
    return [check(summary) for check in CHECKS] + extra


def worst_completeness(summary: DatasetSummary) -> float | None:
    """The largest per-layer median relative completeness error of the run (the faithfulness of its numbers)."""
    medians = [m for m in summary.completeness["median"] if m is not None and not np.isnan(m)]
    return max(medians) if medians else None


def conclusion_table(conclusions: dict[str, list[Verdict]]) -> pd.DataFrame:
    """One row per run and claim, from each run's verdicts."""
    return pd.DataFrame([{"run": run, "claim": v.claim, "holds": v.holds, "evidence": v.evidence}
                         for run, found in conclusions.items() for v in found])


def settings_words(settings: dict) -> str:
    """A run's explanation settings as words (its manifest's dict, which a page would show raw): 'targets span_log_prob ·
    baseline pad · …', a list's items joined by commas."""
    return " · ".join(f"{name.replace('_', ' ')} {', '.join(map(str, value)) if isinstance(value, list) else value}"
                      for name, value in settings.items())
