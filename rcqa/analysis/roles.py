"""What each layer attends to: the paper's answer / supporting / query categories among its top-k
passage words, quantifier questions, and a plain-words reading of the phases."""
from __future__ import annotations

import re

import numpy as np

from rcqa.analysis.words import top_k
from rcqa.types import Attribution, Word

SUPPORT_WINDOW = 5  # words either side of the answer span (the paper's supporting words)
CATEGORIES = ("answer", "supporting", "query")

# the common English stopword list (NLTK's), used to keep function words out of "query words"
STOPWORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these
those am is are was were be been being have has had having do does did doing a an the and but if
or because as until while of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where
why how all any both each few more most other some such no nor not only own same so than too very s
t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma
mightn mustn needn shan shouldn wasn weren won wouldn
""".split())

_NUMBER_WORDS = frozenset("""zero one two three four five six seven eight nine ten eleven twelve thirteen
fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
ninety hundred thousand million billion trillion dozen half once twice""".split())


def normalise(text: str) -> str:
    return text.lower().strip()


def is_number(text: str) -> bool:
    """A cardinal number (what a POS tagger would tag CD): digits, or a number word."""
    return bool(re.fullmatch(r"\d[\d,.]*", text)) or normalise(text) in _NUMBER_WORDS


def is_quantifier_question(question: str) -> bool:
    """The paper's test: the question holds 'how' and 'many' or 'much'."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    return "how" in words and bool(words & {"many", "much"})


def category_masks(result: Attribution) -> dict[str, np.ndarray]:
    """Per passage word: inside the predicted span; within 5 words of it; a non-stopword of the question."""
    passage = result.passage_words()
    best = result.answer.best
    answer = np.array([best is not None and best.overlaps(w.start_char, w.end_char) for w in passage])
    inside = np.flatnonzero(answer)
    supporting = np.zeros(len(passage), dtype=bool)
    if inside.size:
        first, last = inside[0], inside[-1]
        supporting[max(0, first - SUPPORT_WINDOW):first] = True
        supporting[last + 1:last + 1 + SUPPORT_WINDOW] = True
    question = {normalise(w.text) for w in result.words if w.segment == "question"} - STOPWORDS
    query = np.array([normalise(w.text) in question for w in passage])
    return {"answer": answer, "supporting": supporting, "query": query}


def word_categories(result: Attribution) -> list[str]:
    """One label per passage word for display: 'answer', 'supporting', 'query', 'answer+query', or ''."""
    masks = category_masks(result)
    return ["+".join(c for c in CATEGORIES if masks[c][i]) for i in range(len(result.passage_words()))]


def category_shares(result: Attribution, distribution: np.ndarray, k: int = 5) -> dict[str, np.ndarray]:
    """Per layer, the % of its top-k passage words in each category (a word may count in two)."""
    masks = category_masks(result)
    top = top_k(distribution, k)
    size = top.shape[1]
    return {name: 100 * mask[top].sum(axis=1) / max(size, 1) for name, mask in masks.items()}


def quantifier_share(result: Attribution, distribution: np.ndarray, k: int = 5) -> np.ndarray | None:
    """Per layer, (numbers among the top-k, less one if one is in the prediction) / numbers in the passage.
    None unless the question is a quantifier question over a passage with at least two numbers."""
    passage = result.passage_words()
    numbers = np.array([is_number(w.text) for w in passage])
    if not is_quantifier_question(result.example.question) or numbers.sum() < 2:
        return None
    predicted = category_masks(result)["answer"]
    top = top_k(distribution, k)
    counts = numbers[top].sum(axis=1) - (numbers & predicted)[top].any(axis=1)
    return 100 * counts / numbers.sum()


def phase_readings(layers: list[str], shares: dict[str, np.ndarray]) -> list[tuple[str, str]]:
    """Split the layers into early / middle / late thirds and say in plain words what dominates each."""
    bounds = np.array_split(np.arange(len(layers)), 3)
    meaning = {"query": "matching the question's words in the passage",
               "supporting": "reading the context around the answer",
               "answer": "settling on and verifying the answer"}
    readings = []
    for name, indices in zip(("Early", "Middle", "Late"), bounds):
        if not len(indices):
            continue
        means = {c: float(shares[c][indices].mean()) for c in CATEGORIES}
        leading = max(means, key=means.get)
        span = layers[indices[0]] if len(indices) == 1 else f"{layers[indices[0]]}–{layers[indices[-1]]}"
        detail = ", ".join(f"{c} {means[c]:.0f}%" for c in CATEGORIES)
        readings.append((f"{name} ({span})", f"mostly {leading} words ({detail}): {meaning[leading]}."))
    return readings


def top_words(result: Attribution, distribution: np.ndarray, k: int = 5) -> list[list[Word]]:
    passage = result.passage_words()
    return [[passage[i] for i in row] for row in top_k(distribution, k)]
