"""The official SQuAD metrics (v1.1, and v2.0 with its thresholds), and the trade-off a threshold makes between
abstaining and answering."""
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
    exact_raw, f1_raw = _raw_scores(golds, predictions)
    metrics = {}
    for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
        scored = _at_threshold(raw, has_answer, null_odds, threshold)
        for prefix, chosen in (("", golds), ("HasAns_", [q for q in golds if has_answer[q]]),
                               ("NoAns_", [q for q in golds if not has_answer[q]])):
            if chosen:
                metrics[f"{prefix}{name}"] = 100.0 * sum(scored[q] for q in chosen) / len(chosen)
                metrics[f"{prefix}total"] = len(chosen)
    for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
        metrics[f"best_{name}"], metrics[f"best_{name}_thresh"] = _best_threshold(predictions, raw, null_odds,
                                                                                  has_answer)
    return metrics


def question_f1(golds: dict[str, list[str]], predictions: dict[str, str], null_odds: dict[str, float],
                threshold: float = float("inf")) -> dict[str, float]:
    """Each question's F1 (0 to 1) as squad_v2_metrics counts it: abstaining (null odds over threshold) scores 1 on an
    unanswerable question and 0 on an answerable one; otherwise the span's F1 against the gold texts."""
    has_answer = {qid: bool(texts) for qid, texts in golds.items()}
    return _at_threshold(_raw_scores(golds, predictions)[1], has_answer, null_odds, threshold)


def _at_threshold(raw: dict[str, float], has_answer: dict[str, bool], null_odds: dict[str, float],
                  threshold: float) -> dict[str, float]:
    return {qid: float(not has_answer[qid]) if null_odds[qid] > threshold else value for qid, value in raw.items()}


def paired_v2_f1(examples: list[Example], first: dict[str, tuple[str, float]], first_threshold: float | None,
                 second: dict[str, tuple[str, float]], second_threshold: float | None,
                 group: Callable[[Example], str | None] | None = None) -> dict:
    """Two models' v2.0 F1 on the same questions, each at its own threshold (None: it never abstains), compared
    question by question: first − second in F1 points, with its paired 95 % bootstrap interval; told apart only
    where the interval excludes 0. first and second: per question id, (best span text, null odds). `HasAns` and
    `NoAns` compare the answerable and the unanswerable questions alike (what a lower threshold trades: one model may
    score higher overall by abstaining more, at the answerable questions' cost), where the file holds both. With
    `group` (an unanswerable question's kind, or None), `by_kind` compares the NoAns F1 of each kind's questions."""
    import numpy as np

    from rcqa.intervals import excludes_zero, mean_with_interval

    golds = {e.id: [] if e.is_impossible else [a.text for a in e.answers] for e in examples}

    def scores(predictions: dict[str, tuple[str, float]], threshold: float | None) -> dict[str, float]:
        found = question_f1(golds, {q: predictions[q][0] for q in golds}, {q: predictions[q][1] for q in golds},
                            float("inf") if threshold is None else threshold)
        return {q: 100.0 * value for q, value in found.items()}

    first_f1, second_f1 = scores(first, first_threshold), scores(second, second_threshold)

    def compared(ids: list[str], name: str) -> dict:
        ours, theirs = np.array([first_f1[q] for q in ids]), np.array([second_f1[q] for q in ids])
        difference = mean_with_interval(ours - theirs)
        return {name: float(ours.mean()), f"against_{name}": float(theirs.mean()), "difference": difference,
                "told_apart": excludes_zero(difference["low"], difference["high"])}

    found = compared(list(golds), "f1")
    answerable = [e.id for e in examples if not e.is_impossible]
    unanswerable = [e.id for e in examples if e.is_impossible]
    if answerable and unanswerable:
        found["HasAns"], found["NoAns"] = compared(answerable, "HasAns_f1"), compared(unanswerable, "NoAns_f1")
    kinds: dict[str, list[str]] = {}
    for example in examples:
        if group is not None and example.is_impossible and (kind := group(example)):
            kinds.setdefault(kind, []).append(example.id)
    if kinds:
        found["by_kind"] = {kind: compared(ids, "NoAns_f1") for kind, ids in sorted(kinds.items())}
    return found


def _raw_scores(golds: dict[str, list[str]], predictions: dict[str, str]) -> tuple[dict[str, float], dict[str, float]]:
    """Each question's exact and F1 as the v2.0 script's get_raw_scores: max over its non-empty gold texts, and an
    unanswerable one (no gold text) scored against "" (1 where the prediction is empty too)."""
    exact_raw, f1_raw = {}, {}
    for qid, texts in golds.items():
        kept = [t for t in texts if normalize_answer(t)] or [""]
        exact_raw[qid] = max(exact_match(predictions[qid], t) for t in kept)
        f1_raw[qid] = max(_tokens_f1(predictions[qid], t) for t in kept)
    return exact_raw, f1_raw


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


def abstention_curve(examples: list[Example], predictions: dict[str, tuple[str, float]], kinds: Iterable[str],
                     group: Callable[[Example], str | None]) -> list[dict]:
    """The trade-off a threshold makes: at every threshold where a decision changes (abstain where the null odds
    exceed it), from abstaining everywhere to answering everything, the unanswerable questions of the counted kinds
    abstained on (in all and per kind) and the answerable questions' F1 (HasAns_f1, an abstention scoring 0, as
    the official script scores it).

    predictions: per question id its best span's text and null odds (rcqa.export.checkpoints.null_predictions); group names
    an unanswerable question's kind (rcqa.negatives.negative_kind). Thresholds fall in decreasing abstention."""
    counted = set(kinds)
    golds = {e.id: [] if e.is_impossible else [a.text for a in e.answers] for e in examples}
    _, f1_raw = _raw_scores(golds, {qid: text for qid, (text, _) in predictions.items()})
    odds = {qid: predictions[qid][1] for qid in golds}
    answerable = [q for q, texts in golds.items() if texts]
    chosen = {e.id: group(e) for e in examples if e.is_impossible and group(e) in counted}
    distinct = sorted(set(odds.values()))
    points = []
    for threshold in [distinct[0] - 1.0, *distinct] if distinct else []:
        abstained = [q for q in chosen if odds[q] > threshold]
        points.append({"threshold": threshold, "abstained": len(abstained), "of": len(chosen),
                       "abstained_by_kind": {kind: sum(chosen[q] == kind for q in abstained) for kind in sorted(counted)},
                       "HasAns_f1": 100.0 * sum(f1_raw[q] for q in answerable if odds[q] <= threshold)
                       / len(answerable) if answerable else float("nan")})
    return points


def best_abstention_above(points: list[dict], floor: float) -> dict | None:
    """Where a curve stops: the point abstaining on the most counted questions with HasAns_f1 still at least floor
    (of those, the highest F1); None if no threshold keeps the floor."""
    kept = [p for p in points if p["HasAns_f1"] >= floor]
    return max(kept, key=lambda p: (p["abstained"], p["HasAns_f1"])) if kept else None
