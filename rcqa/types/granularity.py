"""An explanation read at one granularity: tokens, words, phrases or sentences, at every layer.

As inseq's aggregators and interpreto's Granularity do, a unit's score is the sum of its tokens' scores, and every
token is in exactly one unit, so a layer's total is the same at every granularity (conservation). The units:

- token: each of the window's tokens (word-pieces, [CLS] and [SEP] included);
- word: the words as written (rcqa.text.written_words), each with its word-pieces: the paper's merge;
- phrase: the passage's and the question's noun phrases (spaCy's noun chunks), and every other word alone;
- sentence: the passage's sentences (spaCy's parser), the question as one unit.

At every granularity but token's, the special tokens are units apart, one per kind ([CLS], [SEP]): a whole passage's
windows each hold them, and their scores are summed as a word's pieces are. A whole passage's words hold their tokens
in every window that reads them, so a sentence cut by a window boundary is one sentence.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args

import numpy as np

from rcqa.text import segments
from rcqa.types.answers import Example, Word

Granularity = Literal["token", "word", "phrase", "sentence"]
GRANULARITIES: tuple[Granularity, ...] = get_args(Granularity)
SPECIAL = "special"  # the segment of a unit of special tokens ([CLS], [SEP], padding)


class Explained(Protocol):
    """What a granularity reads of an explanation (rcqa.types.attribution.Attribution, which reads itself so)."""

    example: Example
    tokens: list[str]
    token_offsets: list[tuple[int, int]]
    token_segments: list[str]
    words: list[Word]
    layers: list[str]

    def layer_scores(self, aggregation, target: int = 0) -> np.ndarray: ...

    def explained_span(self, target: int = 0) -> tuple[int, int]: ...


@dataclass(frozen=True)
class Unit:
    """One unit of a granularity: its text (as written, or the token's own for a token or special unit), its segment
    ("question", "passage" or SPECIAL), its characters [start_char, end_char) in that segment's text (0, 0 for a
    special unit) and the tokens whose scores it sums."""

    text: str
    segment: str
    start_char: int
    end_char: int
    tokens: tuple[int, ...]

    def to_dict(self) -> dict:
        return {"text": self.text, "segment": self.segment, "start_char": self.start_char, "end_char": self.end_char,
                "tokens": list(self.tokens)}


@dataclass(frozen=True)
class UnitScores:
    """An explanation's scores at one granularity: scores[layer, unit] is the sum of the unit's tokens' scores under
    `aggregation` for target `target` (signed under a signed aggregation, a magnitude otherwise)."""

    granularity: Granularity
    aggregation: str
    target: int
    layers: list[str]
    units: list[Unit]
    scores: np.ndarray = field(repr=False)
    answer_unit: int | None = None  # the passage unit holding the explained span's first character

    def passage_units(self) -> list[int]:
        return [i for i, unit in enumerate(self.units) if unit.segment == "passage"]

    def shares(self) -> np.ndarray:
        """(layers × passage units): each passage unit's |score| over the layer's total over the passage units (a
        layer that scores no passage unit has all zeros)."""
        magnitudes = np.abs(self.scores[:, self.passage_units()]).astype(np.float64)
        totals = magnitudes.sum(axis=1, keepdims=True)
        return np.divide(magnitudes, totals, out=np.zeros_like(magnitudes), where=totals > 0)

    def strongest(self, signed: bool = False) -> list[int | None]:
        """Per layer, the index (into units) of the passage unit with the largest |score|, or with `signed` the
        largest score itself (the most for the target); None where no passage unit scores. A tie goes to the
        earlier unit."""
        passage = self.passage_units()
        scores = self.scores[:, passage]
        ranked = scores if signed else np.abs(scores)
        return [passage[int(np.argmax(row))] if np.any(row != 0) else None for row in ranked]

    def to_dict(self) -> dict:
        return {"granularity": self.granularity, "aggregation": self.aggregation, "target": self.target,
                "layers": list(self.layers), "units": [unit.to_dict() for unit in self.units],
                "scores": self.scores.round(8).tolist(), "answer_unit": self.answer_unit,
                "strongest": self.strongest()}


def unit_scores(result: Explained, granularity: Granularity, aggregation: str, target: int = 0) -> UnitScores:
    """The result's scores at `granularity` (module docstring)."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"unknown granularity {granularity!r}: one of {', '.join(GRANULARITIES)}")
    found = units(result, granularity)
    tokens = result.layer_scores(aggregation, target)
    scores = np.stack([tokens[:, list(unit.tokens)].sum(axis=1) for unit in found], axis=1)
    span_start = result.explained_span(target)[0]
    holding = [i for i, unit in enumerate(found)
               if unit.segment == "passage" and unit.start_char <= span_start < unit.end_char]
    return UnitScores(granularity, aggregation, target, list(result.layers), found, scores,
                      holding[0] if holding else None)


def units(result: Explained, granularity: Granularity) -> list[Unit]:
    """The result's units at `granularity`, in the order of their first token."""
    if granularity == "token":
        return [Unit(token, result.token_segments[i], *result.token_offsets[i], (i,))
                for i, token in enumerate(result.tokens)]
    words = [Unit(word.text, word.segment, word.start_char, word.end_char, tuple(word.tokens)) for word in result.words]
    if granularity == "phrase":
        words = _grouped(words, lambda text: segments(text).phrases, result)
    elif granularity == "sentence":
        words = _grouped(words, lambda text: segments(text).sentences, result, whole_question=True)
    return sorted(words + _specials(result, words), key=lambda unit: unit.tokens[0])


def _grouped(words: list[Unit], spans_of, result: Explained, whole_question: bool = False) -> list[Unit]:
    """The words merged by the character spans spans_of(text) finds in their segment's text (a word inside no span
    stays alone); the question whole where whole_question."""
    texts = {"question": result.example.question, "passage": result.example.passage}
    merged: list[Unit] = []
    for segment, text in texts.items():
        members = [word for word in words if word.segment == segment]
        if not members:
            continue
        spans = [(0, len(text))] if whole_question and segment == "question" else list(spans_of(text))
        groups: dict[int, list[Unit]] = {}
        for word in members:
            inside = next((i for i, (start, end) in enumerate(spans) if start <= word.start_char < end), None)
            groups.setdefault(len(spans) + word.tokens[0] if inside is None else inside, []).append(word)
        for group in groups.values():
            start, end = min(w.start_char for w in group), max(w.end_char for w in group)
            tokens = tuple(sorted(token for word in group for token in word.tokens))
            merged.append(Unit(text[start:end], segment, start, end, tokens))
    return merged


def _specials(result: Explained, held: list[Unit]) -> list[Unit]:
    """The tokens no unit holds ([CLS], [SEP], padding), one unit per token text."""
    taken = {token for unit in held for token in unit.tokens}
    kinds: dict[str, list[int]] = {}
    for i, token in enumerate(result.tokens):
        if i not in taken:
            kinds.setdefault(token, []).append(i)
    return [Unit(token, SPECIAL, 0, 0, tuple(found)) for token, found in kinds.items()]
