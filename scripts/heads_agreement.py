"""A registered head score's agreement with the knock-outs a `reproduce --heads` run stored, without scoring the run
again: per question, the score computed alone on the question's case (rcqa.attention_heads.head_case, the window the
run scored), Spearman's ρ per layer against what it predicts of the stored knock-outs (HeadScores.agreement's
statistic, Δ = −knockout_drop), the mean over the questions per layer (as the run's summary averages each score's),
and against each score the run stored, the difference of the two per question (the mean over its layers) with its
95 % bootstrap interval over the questions (rcqa.intervals). The run's rows are left as they are.

    python scripts/heads_agreement.py reports/runs/squad-dev-500-heads first_order --out /tmp/first-order.json
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from rcqa.attention_heads import SharedCase, head_case, head_score
from rcqa.dataset.aggregate import load_run, run_examples
from rcqa.dataset.heads import KNOCKOUT
from rcqa.intervals import mean_with_interval
from rcqa.model import load_model


def rho(score: np.ndarray, effect: np.ndarray) -> float | None:
    """Spearman's ρ, None where either is constant (as HeadScores.agreement)."""
    if np.ptp(score) == 0 or np.ptp(effect) == 0:
        return None
    return float(spearmanr(score, effect).statistic)


def layer_mean(values: list[float | None]) -> float:
    defined = [value for value in values if value is not None]
    return float(np.mean(defined)) if defined else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run folder written by `reproduce --heads`")
    parser.add_argument("score", help="a registered head score (rcqa.attention_heads.HEAD_SCORES)")
    parser.add_argument("--limit", type=int, help="the first N of the run's questions, by id (default: all)")
    parser.add_argument("--out", help="where to write the JSON: the summary and each question's ρ per layer")
    args = parser.parse_args()
    score = head_score(args.score)
    run = load_run(args.run)
    cells = {row["id"]: json.loads(row["heads"]) for row in run.rows.select(["id", "heads"]).to_pylist()
             if row["heads"]}
    examples = sorted((e for e in run_examples(args.run) if e.id in cells), key=lambda e: e.id)[:args.limit]
    qa_model = load_model(run.manifest.model.name)
    if qa_model.fingerprint != run.manifest.model.fingerprint:
        raise SystemExit(f"{qa_model.name} is not the model the run scored (its fingerprint differs)")
    rhos: dict[str, list[float | None]] = {}  # question id → ρ per layer
    started = time.perf_counter()
    for done, example in enumerate(examples, 1):
        cell = cells[example.id]
        scored = score.score(SharedCase(qa_model, head_case(qa_model, example.passage, example.question)),
                             lambda share, where: None)
        delta = -np.array(cell["scores"][KNOCKOUT])
        rhos[example.id] = [rho(scored.heads[layer], score.knockout_effect(delta[layer]))
                            for layer in range(len(delta))]
        if done % 25 == 0:
            print(f"{done} of {len(examples)} questions, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    layers = len(rhos[examples[0].id])
    per_layer = [layer_mean([found[layer] for found in rhos.values()]) for layer in range(layers)]
    mine = np.array([layer_mean(found) for found in rhos.values()])
    against = {}
    for other in cells[examples[0].id]["agreement"]:
        theirs = np.array([layer_mean(cells[question]["agreement"][other]) for question in rhos])
        both = ~(np.isnan(mine) | np.isnan(theirs))
        against[other] = {"their_mean_per_layer": [layer_mean([cells[question]["agreement"][other][layer]
                                                               for question in rhos]) for layer in range(layers)],
                          "difference": mean_with_interval(mine[both] - theirs[both])}
    summary = {"run": args.run, "score": args.score, "n": len(rhos), "mean_per_layer": per_layer,
               "mean_over_layers": float(np.mean(per_layer)), "against_stored": against,
               "seconds": time.perf_counter() - started}
    print(json.dumps(summary, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "rho": rhos}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
