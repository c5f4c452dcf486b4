"""The official SQuAD v1.1 metrics: exact match and token F1, max over the gold answers."""
from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Iterable

from rcqa.types import Example

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, collapse whitespace (the official script's order)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction: str, gold: str) -> float:
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def score(prediction: str, golds: Iterable[str]) -> tuple[float, float]:
    """(EM, F1) of one prediction, each the max over the gold answers."""
    golds = list(golds)
    if not golds:
        return 0.0, 0.0
    return max(exact_match(prediction, g) for g in golds), max(f1(prediction, g) for g in golds)


def evaluate(examples: list[Example], predict: Callable[[Example], str],
             progress: Callable[[Iterable], Iterable] = iter) -> dict:
    """Percent EM and F1 over the answerable examples, as the official SQuAD v1.1 script reports."""
    answerable = [e for e in examples if e.answers and not e.is_impossible]
    total_em = total_f1 = 0.0
    for example in progress(answerable):
        em, f = score(predict(example), (a.text for a in example.answers))
        total_em += em
        total_f1 += f
    n = len(answerable)
    return {"exact_match": 100 * total_em / n if n else 0.0, "f1": 100 * total_f1 / n if n else 0.0, "n": n}


def _tokens_f1(prediction: str, gold: str) -> float:
    """The v2.0 script's F1: where either side has no tokens (an unanswerable's gold is ""), 1 if both have none."""
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    return f1(prediction, gold)


def squad_v2_metrics(golds: dict[str, list[str]], predictions: dict[str, str], null_odds: dict[str, float],
                     threshold: float = float("inf")) -> dict:
    """The official SQuAD v2.0 script's numbers (evaluate-v2.0.py run with --na-prob-file and --na-prob-thresh).

    golds: per question its gold answer texts ([] for an unanswerable one); predictions: the best span's text;
    null_odds: the model's odds of "no answer" (rcqa: null score − best span score), read as abstaining where
    they exceed threshold. best_exact / best_f1 and their thresholds are the script's find_best_thresh over the
    same odds."""
    has_answer = {qid: bool(texts) for qid, texts in golds.items()}
    exact_raw, f1_raw = {}, {}
    for qid, texts in golds.items():
        kept = [t for t in texts if normalize_answer(t)] or [""]
        exact_raw[qid] = max(exact_match(predictions[qid], t) for t in kept)
        f1_raw[qid] = max(_tokens_f1(predictions[qid], t) for t in kept)
    metrics = {}
    for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
        scored = {qid: float(not has_answer[qid]) if null_odds[qid] > threshold else value for qid, value in raw.items()}
        for prefix, chosen in (("", golds), ("HasAns_", [q for q in golds if has_answer[q]]),
                               ("NoAns_", [q for q in golds if not has_answer[q]])):
            if chosen:
                metrics[f"{prefix}{name}"] = 100.0 * sum(scored[q] for q in chosen) / len(chosen)
                metrics[f"{prefix}total"] = len(chosen)
    for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
        metrics[f"best_{name}"], metrics[f"best_{name}_thresh"] = _best_threshold(predictions, raw, null_odds,
                                                                                  has_answer)
    return metrics


def _best_threshold(predictions: dict[str, str], raw: dict[str, float], null_odds: dict[str, float],
                    has_answer: dict[str, bool]) -> tuple[float, float]:
    """The v2.0 script's find_best_thresh: from 'abstain everywhere', answer the questions one by one in the
    order of their null odds and keep the odds where the total score is highest."""
    score: float = sum(1 for qid in has_answer if not has_answer[qid])
    best = score
    best_threshold = 0.0
    for qid in sorted(null_odds, key=lambda q: null_odds[q]):
        if qid not in raw:
            continue
        score += raw[qid] if has_answer[qid] else (-1 if predictions[qid] else 0)
        if score > best:
            best, best_threshold = score, null_odds[qid]
    return 100.0 * best / len(raw), best_threshold


def evaluate_v2(examples: list[Example], predict: Callable[[Example], tuple[str, float]],
                threshold: float | None = 0.0, progress: Callable[[Iterable], Iterable] = iter,
                group: Callable[[Example], str | None] | None = None) -> dict:
    """The official SQuAD v2.0 metrics. predict gives (best span text, null score − best span score); the model
    abstains where the difference exceeds threshold (None: it never abstains, as with --no-null).

    group names the kind of each unanswerable question (rcqa.negatives.negative_kind): "by_kind" then gives the
    metrics of the answerable questions with each kind's unanswerable ones apart."""
    golds, predictions, null_odds = {}, {}, {}
    for example in progress(examples):
        golds[example.id] = [] if example.is_impossible else [a.text for a in example.answers]
        predictions[example.id], null_odds[example.id] = predict(example)
    cut = float("inf") if threshold is None else threshold
    metrics = squad_v2_metrics(golds, predictions, null_odds, cut)
    kinds = {e.id: group(e) for e in examples if e.is_impossible} if group else {}
    if any(kinds.values()):
        metrics["by_kind"] = {}
        for kind in sorted({k for k in kinds.values() if k}):
            chosen = {q: g for q, g in golds.items() if q not in kinds or kinds[q] == kind}
            metrics["by_kind"][kind] = squad_v2_metrics(chosen, predictions, {q: null_odds[q] for q in chosen}, cut)
    return metrics
