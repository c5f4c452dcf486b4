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
