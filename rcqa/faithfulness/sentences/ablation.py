"""Leave one sentence out, and ContextCite's surrogate: the model's own answer read with sentences deleted, the
references an explanation's sentence scores are checked against. Each passage sentence is deleted in turn, the
shortened passage is read again (every window encoded afresh), and the answer's probability is read where its
characters now stand. A sentence the answer rests on lowers it when deleted; the sentence that holds the answer
takes it away (probability 0). ContextCite (Cohen-Wang et al., 2024) keeps random halves of the sentences instead and
fits a sparse linear surrogate to the answer's log-odds.

Neither needs a gradient, so they judge every method alike."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rcqa import qa
from rcqa.model import QAModel
from rcqa.spans import answer_standing
from rcqa.text import segments
from rcqa.types import Example, overlaps


@dataclass(frozen=True)
class SentenceAblation:
    """Per passage sentence (characters [start, end) of the passage, in order): the answer's probability with the
    sentence deleted, beside its probability over the whole passage."""

    answer: str
    answer_chars: tuple[int, int]
    probability: float  # over the whole passage
    sentences: list[tuple[int, int]]
    without: list[float]  # the answer's probability with each sentence deleted (0 where the sentence holds it)

    @property
    def drops(self) -> np.ndarray:
        """How much deleting each sentence lowers the answer's probability (negative where it raises it)."""
        return self.probability - np.asarray(self.without)

    def to_dict(self) -> dict:
        return {"answer": self.answer, "answer_chars": list(self.answer_chars), "probability": self.probability,
                "sentences": [list(span) for span in self.sentences], "without": self.without,
                "drops": self.drops.round(8).tolist()}


def without_sentences(passage: str, sentences: list[tuple[int, int]]) -> tuple[str, Callable[[int], int]]:
    """The passage with these sentences [start, end) and the whitespace after each deleted, and where a character of
    the passage outside them now stands."""
    cuts = []
    for start, end in sorted(sentences):
        while end < len(passage) and passage[end].isspace():
            end += 1
        cuts.append((start, end))
    kept = zip([0, *(end for _, end in cuts)], [*(start for start, _ in cuts), len(passage)])
    return "".join(passage[a:b] for a, b in kept), lambda char: char - sum(b - a for a, b in cuts if b <= char)


def probability_without(qa_model: QAModel, example: Example, sentences: list[tuple[int, int]],
                        answer_chars: tuple[int, int]) -> float:
    """The answer's probability, read where its characters [start, end) of the passage now stand, with these
    sentences deleted; 0 where one of them holds (part of) the answer."""
    start, end = answer_chars
    if any(overlaps(a, b, start, end) for a, b in sentences):
        return 0.0
    shortened, moved = without_sentences(example.passage, sentences)
    return answer_probability(qa_model, shortened, example.question, moved(start), moved(end))


def answer_probability(qa_model: QAModel, passage: str, question: str, start_char: int, end_char: int) -> float:
    """The probability the model gives the whole-word answer at passage characters [start_char, end_char), among
    every answer it weighs (rcqa.spans.answer_standing); 0 where no window holds it."""
    windows = qa.encode(qa_model, question, passage)
    start_logits, end_logits = qa.logits(qa_model, windows)
    span = qa.char_span_to_tokens(windows, start_char, end_char)
    return 0.0 if span is None else answer_standing(start_logits, end_logits, windows, passage, span)[1]


def leave_one_sentence_out(qa_model: QAModel, example: Example, answer_chars: tuple[int, int],
                           read: Callable[[], None] = lambda: None) -> SentenceAblation:
    """Delete each of the passage's sentences (rcqa.text.segments) in turn and read the answer at answer_chars
    (characters of the passage) again, where it now stands. `read` hears each reading done (a stop point)."""
    sentences = list(segments(example.passage).sentences)
    without = [_heard(probability_without(qa_model, example, [sentence], answer_chars), read)
               for sentence in sentences]
    whole = _heard(answer_probability(qa_model, example.passage, example.question, *answer_chars), read)
    return SentenceAblation(example.passage[slice(*answer_chars)], answer_chars, whole, sentences, without)


@dataclass(frozen=True)
class Surrogate:
    """ContextCite's surrogate (Cohen-Wang et al., 2024): a sparse linear model of the answer's log-odds from which
    sentences are kept, fitted on random ablations; its weights score the sentences, and its R² on held-out
    ablations says how far a linear score can describe the model at all."""

    sentences: list[tuple[int, int]]
    weights: list[float]  # per sentence: how much keeping it adds to the answer's log-odds
    intercept: float
    held_out_r2: float
    ablations: int

    def to_dict(self) -> dict:
        return {"sentences": [list(span) for span in self.sentences], "weights": self.weights,
                "intercept": self.intercept, "held_out_r2": self.held_out_r2, "ablations": self.ablations}


def log_odds(probability: float, floor: float = 1e-6) -> float:
    clipped = min(max(probability, floor), 1 - floor)
    return float(np.log(clipped / (1 - clipped)))


def fit_surrogate(masks: np.ndarray, outcomes: np.ndarray, held_out: int, alpha: float = 0.01) -> tuple:
    """(weights, intercept, R² on the last `held_out` ablations) of a Lasso fit of outcomes on the 0/1 masks (ablations
    × sentences), as ContextCite fits its surrogate."""
    from sklearn.linear_model import Lasso
    from sklearn.metrics import r2_score

    train, test = slice(0, len(masks) - held_out), slice(len(masks) - held_out, len(masks))
    model = Lasso(alpha=alpha).fit(masks[train], outcomes[train])
    r2 = float(r2_score(outcomes[test], model.predict(masks[test]))) if held_out > 1 else float("nan")
    return model.coef_.tolist(), float(model.intercept_), r2


def context_cite(qa_model: QAModel, example: Example, answer_chars: tuple[int, int], ablations: int = 48,
                 held_out: int = 16, seed: int = 0, read: Callable[[], None] = lambda: None) -> Surrogate:
    """Keep each sentence with probability 1/2 (the sentence holding the answer always), read the answer's
    probability where its characters stand in each shortened passage, and fit the surrogate on the log-odds. `read`
    hears each reading done (a stop point)."""
    sentences = list(segments(example.passage).sentences)
    holding = [i for i, (a, b) in enumerate(sentences) if overlaps(a, b, *answer_chars)]
    masks = np.random.default_rng(seed).integers(0, 2, size=(ablations, len(sentences))).astype(float)
    masks[:, holding] = 1.0
    outcomes = np.array([log_odds(_heard(probability_without(qa_model, example, [s for s, keep in zip(sentences, row)
                                                                                 if not keep], answer_chars), read))
                         for row in masks])
    weights, intercept, r2 = fit_surrogate(masks, outcomes, held_out)
    return Surrogate(sentences, weights, intercept, r2, ablations)


@dataclass(frozen=True)
class SentenceEvidence:
    """What the model itself says of an answer's sentences: leaving each out, and the surrogate (None without
    ablations)."""

    ablation: SentenceAblation
    surrogate: Surrogate | None


def sentence_evidence(qa_model: QAModel, example: Example, answer_chars: tuple[int, int], ablations: int = 32,
                      progress: Callable[[float, str], None] = lambda share, where: None) -> SentenceEvidence:
    """Leave each sentence out, then fit ContextCite's surrogate to `ablations` random ablations (a quarter held out);
    progress hears the share of readings done after each one, where a stopped job ends."""
    total = len(segments(example.passage).sentences) + 1 + ablations
    done = iter(range(1, total + 1))

    def read() -> None:
        step = next(done)
        progress(step / total, f"reading {step} of {total}: the passage with sentences deleted")

    ablation = leave_one_sentence_out(qa_model, example, answer_chars, read)
    surrogate = context_cite(qa_model, example, answer_chars, ablations, ablations // 4, read=read) if ablations else None
    return SentenceEvidence(ablation, surrogate)


def _heard(value: float, read: Callable[[], None]) -> float:
    read()
    return value
