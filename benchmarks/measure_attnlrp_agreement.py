"""How far AttnLRP's layers agree with IG's over a committed run (a script, not a test):

    python -m benchmarks.measure_attnlrp_agreement reports/runs/squad-dev-200-spared [--limit N] > OUT.json

For each question of the run whose IG explanation the run kept (its results/ folder, keyed as the result cache),
AttnLRP explains the same question with the run's settings, and rcqa.analysis.agreement compares the two per layer
(Spearman's ρ of the passage words' scores, top-5 words in common), under the run's token score and, always,
signed against signed (sum) and L2 against L2. Reported as JSON: per token score and layer, the mean of each over
the questions with a 95 % bootstrap interval (scipy), and the seconds AttnLRP took."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.stats import bootstrap

from rcqa.analysis.agreement import COMPARED_SCORES, layer_agreement
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.data import load_examples
from rcqa.dataset import store
from rcqa.model import load_model


def interval(values: list[float]) -> dict:
    data = np.asarray([v for v in values if not np.isnan(v)])
    if np.ptp(data) == 0:  # every question alike: the bootstrap has nothing to resample
        return {"mean": float(data[0]), "low": float(data[0]), "high": float(data[0]), "questions": len(data)}
    low, high = bootstrap((data,), np.mean, confidence_level=0.95, random_state=0).confidence_interval
    return {"mean": float(data.mean()), "low": float(low), "high": float(high), "questions": len(data)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run", type=Path)
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    manifest = json.loads((args.run / "manifest.json").read_text())
    analysis = manifest["analysis"]
    settings = ExplainSettings.from_dict({k: v for k, v in analysis["settings"].items()
                                     if k not in ("max_len", "doc_stride")})
    qa_model = load_model(manifest["model"]["name"])
    kept = store.results(args.run, read_only=True)
    examples = load_examples(manifest["data"]["path"])[:manifest["data"]["limit"]][:args.limit]
    scores = list(dict.fromkeys((analysis["aggregation"], *COMPARED_SCORES)))
    rows, seconds, started = {score: [] for score in scores}, [], time.perf_counter()
    for example in examples:
        ig = kept.get(ResultCache.key(qa_model.fingerprint, example, settings))
        if ig is None:
            continue
        lrp = explain(qa_model, example, replace(settings, method="attnlrp"))
        seconds.append(lrp.seconds)
        for score in scores:
            rows[score].append(layer_agreement(ig, lrp, score, analysis["top_k"]))
    layers = [row.layer for row in rows[scores[0]][0]]
    print(json.dumps({
        "run": str(args.run), "questions": len(seconds), "aggregation": analysis["aggregation"], "k": analysis["top_k"],
        "load_average": os.getloadavg(), "attnlrp_seconds_median": float(np.median(seconds)),
        "wall_seconds": time.perf_counter() - started,
        "by_score": {score: {label: {"spearman": interval([r[i].spearman for r in rows[score]]),
                                     "top_k_overlap": interval([r[i].top_k_overlap for r in rows[score]])}
                             for i, label in enumerate(layers)} for score in scores},
    }, indent=2))


if __name__ == "__main__":
    sys.exit(main())
