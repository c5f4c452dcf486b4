"""SQuAD 2.0-style unanswerable questions built from SQuAD v1.1, offline, for training and testing a model that
may abstain.

Two kinds, as in SQuAD 2.0 (where about a third of the questions have no answer):
- other-paragraph: the question asked of another paragraph of its own article that holds none of its answers,
  preferring the paragraph that shares the question's rarest words (words weighted by their inverse paragraph
  frequency in the article, so "the" counts for nothing);
- in-context: its own paragraph with every sentence holding a gold answer removed, kept only when none of the
  answers is left in what remains. These are harder: the rest of the context still matches the question.
"""
from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from rcqa.evaluate import normalize_answer
from rcqa.types import Example

KINDS = {"other_paragraph": "-neg-other", "in_context": "-neg-ctx"}  # kind → suffix of the negative's id
SQUAD2_SHARE = 1 / 3  # SQuAD 2.0's share of unanswerable questions, about a third
MIN_WORDS_LEFT = 15  # an in-context negative keeps at least this many words of its paragraph
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(\s+)(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile(r"\w+")


def negative_kind(example_id: str) -> str | None:
    """The kind of negative an id names, or None for a question of the source data."""
    return next((kind for kind, suffix in KINDS.items() if example_id.endswith(suffix)), None)


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
    return _negative(example, passage, "in_context")


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
    return _negative(example, article.paragraphs[chosen], "other_paragraph")


def with_negatives(examples: list[Example], share: float = SQUAD2_SHARE, in_context: float = 0.5,
                   seed: int = 0) -> list[Example]:
    """The examples followed by unanswerable ones built from them, so that about `share` of all are unanswerable.

    Source questions are drawn at random (seeded), each giving at most one negative; `in_context` of the
    negatives are in-context ones where the draw allows, the rest other-paragraph ones. Where a question cannot
    give its kind, it tries the other."""
    if not 0 <= share < 1 or not 0 <= in_context <= 1:
        raise ValueError("share must be in [0, 1) and in_context in [0, 1]")
    rng = random.Random(seed)
    wanted = round(len(examples) * share / (1 - share))
    wanted_in_context = round(wanted * in_context)
    articles = _articles(examples)
    order = list(range(len(examples)))
    rng.shuffle(order)
    negatives, counts = [], Counter()
    for index in order:
        if len(negatives) == wanted:
            break
        example = examples[index]
        if example.is_impossible or not example.answers:
            continue
        first = "in_context" if counts["in_context"] < wanted_in_context else "other_paragraph"
        for kind in (first, *(k for k in KINDS if k != first)):
            built = (in_context_negative(example) if kind == "in_context"
                     else other_paragraph_negative(example, articles[example.title], rng))
            if built is not None:
                negatives.append(built)
                counts[kind] += 1
                break
    return [*examples, *negatives]


def split_by_article(examples: list[Example], held_out: int, seed: int = 0) -> tuple[list[Example], list[Example]]:
    """(training, held out): `held_out` whole articles drawn at random are held out, so that no held-out question
    shares a paragraph with a training one (for choosing a checkpoint without dev)."""
    titles = sorted({e.title for e in examples})
    chosen = set(random.Random(seed).sample(titles, min(held_out, len(titles))))
    return [e for e in examples if e.title not in chosen], [e for e in examples if e.title in chosen]


def squad_v2_document(examples: Iterable[Example]) -> dict:
    """The examples as a SQuAD v2.0 file: articles by title, paragraphs by context, is_impossible on every question."""
    articles: dict[str, dict[str, list[dict]]] = defaultdict(dict)
    for example in examples:
        articles[example.title].setdefault(example.passage, []).append({
            "id": example.id, "question": example.question, "is_impossible": example.is_impossible,
            "answers": [{"text": a.text, "answer_start": a.start_char} for a in example.answers]})
    return {"version": "v2.0", "data": [
        {"title": title, "paragraphs": [{"context": context, "qas": qas} for context, qas in paragraphs.items()]}
        for title, paragraphs in articles.items()]}


def _negative(example: Example, passage: str, kind: str) -> Example:
    return replace(example, id=example.id + KINDS[kind], passage=passage, answers=(), is_impossible=True)


def _articles(examples: list[Example]) -> dict[str, Article]:
    found: dict[str, dict[str, None]] = defaultdict(dict)
    for example in examples:
        found[example.title][example.passage] = None
    return {title: Article.of(paragraphs) for title, paragraphs in found.items()}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())
