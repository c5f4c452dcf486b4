"""Leave one sentence out: an explanation's sentence scores checked against the model itself. Each passage sentence is
deleted in turn, the shortened passage is read again (every window encoded afresh), and the answer's probability is
read where its characters now stand. A sentence the answer rests on lowers it when deleted; the sentence that holds
the answer takes it away (probability 0).

This is the leave-one-out that ContextCite (Cohen-Wang et al., 2024) fits its surrogate against, at sentence level,
for an extractive model: it needs no gradient, so it judges every method alike."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rcqa import qa
from rcqa.model import QAModel
from rcqa.spans import answer_standing
from rcqa.text import segments
from rcqa.types import Example


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


def without_sentence(passage: str, sentence: tuple[int, int]) -> tuple[str, int]:
    """The passage with the sentence [start, end) and the whitespace after it deleted, and how many characters went."""
    start, end = sentence
    while end < len(passage) and passage[end].isspace():
        end += 1
    return passage[:start] + passage[end:], end - start


def answer_probability(qa_model: QAModel, passage: str, question: str, start_char: int, end_char: int) -> float:
    """The probability the model gives the whole-word answer at passage characters [start_char, end_char), among
    every answer it weighs (rcqa.spans.answer_standing); 0 where no window holds it."""
    windows = qa.encode(qa_model, question, passage)
    start_logits, end_logits = qa.logits(qa_model, windows)
    span = qa.char_span_to_tokens(windows, start_char, end_char)
    return 0.0 if span is None else answer_standing(start_logits, end_logits, windows, passage, span)[1]


def leave_one_sentence_out(qa_model: QAModel, example: Example, answer_chars: tuple[int, int]) -> SentenceAblation:
    """Delete each of the passage's sentences (rcqa.text.segments) in turn and read the answer at answer_chars
    (characters of the passage) again, where it now stands."""
    passage, (start, end) = example.passage, answer_chars
    sentences = list(segments(passage).sentences)
    without = []
    for sentence in sentences:
        if sentence[0] < end and start < sentence[1]:  # the sentence holds (part of) the answer
            without.append(0.0)
            continue
        shortened, removed = without_sentence(passage, sentence)
        shift = removed if sentence[0] < start else 0
        without.append(answer_probability(qa_model, shortened, example.question, start - shift, end - shift))
    whole = answer_probability(qa_model, passage, example.question, start, end)
    return SentenceAblation(passage[start:end], (start, end), whole, sentences, without)
