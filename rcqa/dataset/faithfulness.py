"""The methods' faithfulness over a dataset: what a run stores per example (a compact record of the document
`python -m rcqa faithfulness` writes) and its averages, each method against random deletion.

A per-example record (rcqa.faithfulness.document.FaithfulnessReport, trimmed) keeps, per method, the deletion curve
(the explained span's probability and whether the answer flipped, for k = 0 … K deleted words) and every summary the
report held (rcqa.faithfulness.summaries: comprehensiveness, sufficiency, AOPC, …); for random deletion the mean over
its draws. Passages with fewer than K deletable words have shorter curves: a mean at k is over the examples that
reach k.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from rcqa.faithfulness.entry import entry_label
from rcqa.faithfulness.document import FaithfulnessReport, Spread  # naopc: null unless bounds searched
from rcqa.faithfulness.paired import MEASURES, paired_differences, verdict
from rcqa.faithfulness.summaries import SUMMARIES, FaithfulnessSummary
from rcqa.intervals import defined_means, mean_with_interval, nullable

RANDOM = "random"


def record(report: FaithfulnessReport) -> str:
    """The row's `faithfulness` cell (JSON) from a faithfulness report."""
    methods = {name: {**entry.summaries, "span_probability": entry.deletion.span_probability,
                      "flipped": [float(f) for f in entry.deletion.flipped]}
               for name, entry in report.methods.items()}
    random = report.random
    methods[RANDOM] = {**{name: _mean(found) for name, found in random.summaries.items()},
                       "span_probability": random.deletion.span_probability.mean,
                       "flipped": random.deletion.flipped.mean}
    return json.dumps({"k": next(iter(report.methods.values())).deletion.k,
                       "original_probability": report.original.span_probability,
                       "operator": report.protocol.operator, "spare_answer": report.protocol.spare_answer,
                       "methods": methods})


def _mean(summary: Spread | None) -> float | None:
    return None if summary is None else summary.mean


def _padded(curves: list[list[float]], length: int) -> np.ndarray:
    return np.array([list(c) + [np.nan] * (length - len(c)) for c in curves], dtype=float)


def summarize_faithfulness(rows: pa.Table, seed: int = 0) -> dict | None:
    """Per entry (a method under one ranking): the mean of each summary with its interval, the share of examples
    where its AOPC beats random's, and the mean deletion and flip curves over k; every pair's paired differences
    (rcqa.faithfulness.paired) and the verdict they allow; None when the run stored no faithfulness."""
    if "faithfulness" not in rows.column_names:
        return None
    records = [json.loads(cell) for cell in rows["faithfulness"].to_pylist() if cell]
    if not records:
        return None
    length = max(len(r["k"]) for r in records)
    # the summaries the records hold (a summary registered after a run was made is not in its rows)
    held = [s for s in SUMMARIES if any(s in entry for r in records for entry in r["methods"].values())]
    methods: dict[str, dict[str, Any]] = {}
    for name in records[0]["methods"]:
        found = [r["methods"][name] for r in records]
        beats = [f["aopc"] > r["methods"][RANDOM]["aopc"] for f, r in zip(found, records)]
        curve, flips = (_padded([f[key] for f in found], length) for key in ("span_probability", "flipped"))
        methods[name] = {
            **{s: mean_with_interval(np.array([f.get(s) for f in found], dtype=float), seed) for s in held},
            "beats_random": None if name == RANDOM else 100 * float(np.mean(beats)),
            "span_probability": nullable(defined_means(curve)), "flip_rate": nullable(100 * defined_means(flips)),
        }
    per_question = {name: {m: np.array([r["methods"][name].get(m) for r in records], dtype=float)
                           for m in MEASURES if m in held} for name in methods}
    paired = paired_differences(per_question, seed)
    means = {name: methods[name]["aopc"]["mean"] for name in methods}
    return {"n": len(records), "k": list(range(length)), "operator": records[0]["operator"],
            "paired": paired, "verdict": verdict(paired, means, entry_label),
            "spare_answer": records[0].get("spare_answer", False),  # runs before the field deleted the answer
            "original_probability": float(np.mean([r["original_probability"] for r in records])),
            "methods": methods}


def held_summaries(found: dict) -> list[FaithfulnessSummary]:
    """The registered summaries a run's faithfulness section gives a mean of (rcqa.faithfulness.summaries)."""
    return [summary for summary in SUMMARIES.values()
            if any((method.get(summary.name) or {}).get("mean") is not None for method in found["methods"].values())]


def summaries_prose(found: dict) -> str:
    """Whose measures the section's summaries are, and which way each is more faithful, as the report says it."""
    held = held_summaries(found)
    higher, lower = ([s.label for s in held if s.higher_is_better == way] for way in (True, False))
    directions = [f"{way} {_listed(labels)}" for way, labels in (("higher", higher), ("lower", lower)) if labels]
    return f"{', '.join(s.source for s in held)}; {' and '.join(directions)} are more faithful"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"

