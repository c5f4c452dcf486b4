"""The two kinds that move the question to another passage: other-paragraph and in-context negatives."""
from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from rcqa.evaluate import normalize_answer
from rcqa.negatives.kinds import as_negative
from rcqa.types import Example

MIN_WORDS_LEFT = 15  # an in-context negative keeps at least this many words of its paragraph
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(\s+)(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile(r"\w+")


def occurs(phrase: str, text: str) -> bool:
    """Whether the phrase appears in the text as whole words, both normalised as the SQuAD metric does."""
    needle = normalize_answer(phrase)
    return bool(needle) and f" {needle} " in f" {normalize_answer(text)} "


def sentences(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence: a break after . ! ? (and closing quotes) before an upper-case letter or digit."""
    bounds, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        bounds.append((start, match.start(1)))
        start = match.end(1)
    return [*bounds, (start, len(text))] if start < len(text) else bounds


def holds_answer(text: str, example: Example, normalised: str | None = None) -> bool:
    """Whether any gold answer, normalised as the SQuAD metric does, appears in text as whole words (normalised:
    text already normalised)."""
    haystack = f" {normalize_answer(text) if normalised is None else normalised} "
    return any(f" {needle} " in haystack for needle in (normalize_answer(a.text) for a in example.answers) if needle)


@dataclass(frozen=True)
class Article:
    """An article's paragraphs with what choosing among them asks, computed once: their normalised text, their
    word sets, and each word's paragraph frequency."""

    paragraphs: tuple[str, ...]
    normalised: tuple[str, ...]
    words: tuple[frozenset[str], ...]
    frequency: Counter

    @classmethod
    def of(cls, paragraphs: Iterable[str]) -> Article:
        paragraphs = tuple(paragraphs)
        words = tuple(frozenset(_words(p)) for p in paragraphs)
        return cls(paragraphs, tuple(normalize_answer(p) for p in paragraphs), words,
                   Counter(w for found in words for w in found))


def in_context_negative(example: Example) -> Example | None:
    """The example's paragraph without the sentences holding its gold answers; None if an answer remains or too
    little is left."""
    spans = [(a.start_char, a.start_char + len(a.text)) for a in example.answers if a.start_char >= 0]
    if not spans:
        return None
    kept = [example.passage[s:e] for s, e in sentences(example.passage)
            if not any(s < answer_end and answer_start < e for answer_start, answer_end in spans)]
    passage = " ".join(kept)
    if len(passage.split()) < MIN_WORDS_LEFT or holds_answer(passage, example):
        return None
    return as_negative(example, "in_context", passage=passage)


def other_paragraph_negative(example: Example, article: Article, rng: random.Random) -> Example | None:
    """The question asked of the paragraph of its article that shares most of its rare words and holds none of its
    answers (ties drawn with rng); None if every other paragraph holds one."""
    candidates = [i for i, p in enumerate(article.paragraphs)
                  if p != example.passage and not holds_answer(p, example, article.normalised[i])]
    if not candidates:
        return None
    question = set(_words(example.question))
    n = len(article.paragraphs)
    scores = [sum(math.log(n / article.frequency[w]) for w in question & article.words[i]) for i in candidates]
    best = max(scores)
    chosen = rng.choice([i for i, score in zip(candidates, scores) if score == best])
    return as_negative(example, "other_paragraph", passage=article.paragraphs[chosen])


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())
