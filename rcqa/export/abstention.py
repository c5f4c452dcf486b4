"""What an abstaining model's card measures: the threshold tuned on held-out questions, the dev scores at it (SQuAD
v1.1 dev with answers forced, a v2-style dev set built from it), a hard set's kinds, and how far a threshold trades
answerable F1 for abstention (compared model against model, question by question)."""
from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from scipy.stats import binomtest

from rcqa.evaluate import abstention_curve, best_abstention_above, evaluate, evaluate_v2
from rcqa.export.checkpoints import Progress, null_predictions
from rcqa.intervals import mean_with_interval
from rcqa.model import QAModel
from rcqa.negatives import negative_kind, with_negatives
from rcqa.types import Example


V2STYLE_DEV = "python -m rcqa negatives --data ~/.cache/rcqa/squad/dev-v1.1.json --out dev-v2style.json"


def v2style_dev(dev: list[Example], in_context: float = 0.5, perturbed: float = 0.0) -> tuple[list[Example], str]:
    """The v2-style dev set an abstaining model is measured on (dev with a third of negatives, in_context and
    perturbed of them as in training, seed 0) and the command that writes it as a file."""
    return with_negatives(dev, in_context=in_context, perturbed=perturbed), v2style_command(in_context, perturbed)


def v2style_command(in_context: float = 0.5, perturbed: float = 0.0, out: str = "dev-v2style.json") -> str:
    """The `rcqa negatives` command that writes the v2-style dev file of a run's mix as `out`."""
    mix = f" --in-context {in_context:.3f} --perturbed {perturbed:.3f}" if perturbed else ""
    return V2STYLE_DEV.replace("dev-v2style.json", out) + mix


def abstention_evaluation(qa_model: QAModel, held_out: list[Example], mixed: list[Example], built_with: str,
                          progress: Progress = iter) -> dict:
    """The card's "no answer" section and its dev scores for an exported model: the threshold tuned on the held-out
    questions (their scores with each kind of negative apart kept too), then, at that threshold, SQuAD v1.1 dev with
    answers forced (mixed's answerable questions) and the v2-style dev set `mixed` (v2style_dev, or that file as
    `built_with` wrote it), overall and for each kind of negative."""
    held_out_predictions = null_predictions(qa_model, held_out, progress)
    tuned = evaluate_v2(held_out, _predictor(held_out_predictions), None, group=lambda e: negative_kind(e.id))
    threshold = peak_threshold(tuned, [odds for _, odds in held_out_predictions.values()])
    predictions = null_predictions(qa_model, mixed, progress)
    answerable = [e for e in mixed if not e.is_impossible]
    return {"no_answer": {"threshold": threshold,
                          "rule": "abstain when null score − best span score > threshold (BERT run_squad's "
                                  "null_score_diff_threshold; the null score is the least [CLS] start + end over "
                                  "windows)",
                          "tuned_on": {"questions": len(held_out),
                                       "unanswerable": sum(e.is_impossible for e in held_out),
                                       "best_f1": tuned["best_f1"], "best_exact": tuned["best_exact"],
                                       **({"by_kind": {kind: {"best_f1": m["best_f1"], "NoAns_total": m["NoAns_total"]}
                                                       for kind, m in tuned["by_kind"].items()}}
                                          if "by_kind" in tuned else {})}},
            "squad_v1.1_dev": {**evaluate(answerable, lambda e: predictions[e.id][0]), "answers": "forced"},
            "squad_v2style_dev": {**evaluate_v2(mixed, _predictor(predictions), threshold,
                                                              group=lambda e: negative_kind(e.id)),
                                  "threshold": threshold, "built_with": built_with}}


def hard_set_evaluation(qa_model: QAModel, examples: list[Example], threshold: float, source: str,
                        progress: Progress = iter) -> dict:
    """The card's "hand_written" section: the official v2.0 metrics of a SQuAD v2.0 file of hard questions (the
    hand-written set, whose ids carry their kind) at the tuned threshold, each kind of unanswerable question apart
    (its NoAns_exact is the share abstained on)."""
    predictions = null_predictions(qa_model, examples, progress)
    return {"file": source, **evaluate_v2(examples, _predictor(predictions), threshold,
                                          group=lambda e: negative_kind(e.id))}


def abstention_tradeoff(models: dict[str, QAModel], examples: list[Example], kinds: Iterable[str], floor: float,
                        progress: Progress = iter) -> dict:
    """How far each model's threshold can trade answerable F1 for abstention on the counted kinds of a hard set
    (the hand-written set's antonyms and entity swaps): per model its curve over every threshold
    (rcqa.evaluate.abstention_curve), where it stops with HasAns F1 at least `floor`, and, for a model whose card
    tunes a threshold, what it does at that threshold. Each such model after the first is compared with the first
    at their thresholds, question by question: the mean difference in abstention on the counted questions with its
    paired 95 % bootstrap interval."""
    kinds = sorted(set(kinds))
    found: dict = {"kinds": kinds, "floor": floor, "models": []}
    abstentions: dict[str, np.ndarray] = {}
    for name, qa_model in models.items():
        predictions = null_predictions(qa_model, examples, progress)
        curve = abstention_curve(examples, predictions, kinds, lambda e: negative_kind(e.id))
        row: dict = {"model": name, "stops": best_abstention_above(curve, floor), "curve": curve, "threshold": None}
        if qa_model.trained_with_unanswerable:
            threshold = qa_model.null_threshold
            row["threshold"] = threshold
            # the same decisions as the threshold itself: the curve's last point at or below it
            row["at_threshold"] = max((p for p in curve if p["threshold"] <= threshold),
                                      key=lambda p: p["threshold"], default=curve[0])
            counted = [e.id for e in examples if e.is_impossible and negative_kind(e.id) in kinds]
            abstentions[name] = np.array([float(predictions[q][1] > threshold) for q in counted])
        found["models"].append(row)
    tuned = list(abstentions)
    found["compared"] = [{"model": name, "against": tuned[0], **_paired(abstentions[name], abstentions[tuned[0]])}
                         for name in tuned[1:]]
    return found


def _paired(model: np.ndarray, against: np.ndarray) -> dict:
    """One model's abstentions (1 or 0 per question) against another's on the same questions: the mean difference
    with its paired bootstrap interval, the questions only each abstains on, and the exact McNemar test on those
    (a two-sided sign test on the questions where they differ)."""
    differences = model - against
    only_model, only_against = int((differences > 0).sum()), int((differences < 0).sum())
    return {"abstained_difference": mean_with_interval(differences), "only_model": only_model,
            "only_against": only_against,
            "mcnemar_p": float(binomtest(only_model, only_model + only_against).pvalue) if only_model + only_against
            else None}


def carried_rows(earlier: dict, measured: dict, source: str) -> list[dict]:
    """The curves of an earlier abstention_tradeoff (read from `source`) that are not measured again: models kept
    along a run whose folders are gone. `measured` is the new curve's file, kinds, floor and the labels of its models.
    Only untuned rows travel: a model with a threshold is compared question by question with the others, so it must
    be measured now. Refused (ValueError) where the file, kinds or floor differ."""
    differing = [f"{key} {earlier.get(key)!r} there, {measured[key]!r} here" for key in ("file", "kinds", "floor")
                 if earlier.get(key) != measured[key]]
    if differing:
        raise ValueError(f"{source} measured another curve ({'; '.join(differing)}): nothing of it can be carried")
    return [{**row, "carried_from": source} for row in earlier["models"]
            if row["threshold"] is None and row["model"] not in measured["labels"]]


def peak_threshold(metrics: dict, null_odds: list[float]) -> float:
    """The threshold at which the v2.0 F1 peaks: the official best_f1_thresh, except where the peak is to abstain
    everywhere. The script then leaves 0.0, right for its odds (probabilities, never below 0) but not for null
    score − best span score, which is often negative: any threshold below all the odds abstains everywhere."""
    unanswerable = metrics.get("NoAns_total", 0)
    if metrics["best_f1"] == 100.0 * unanswerable / metrics["total"] and null_odds:
        return min(null_odds) - 1.0
    return metrics["best_f1_thresh"]


def _predictor(predictions: dict[str, tuple]) -> Callable[[Example], tuple]:
    return lambda example: predictions[example.id]
