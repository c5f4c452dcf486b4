"""What goes in and what the model answers: an Example (a question about a passage), its gold answers, the
candidate Spans, "no answer", the Answer, and the Words (spaCy tokens) a result's tokens are mapped onto."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from rcqa.text import is_punctuation


@dataclass(frozen=True, slots=True)  # slots: an uploaded file's answers and questions, 100 bytes less each
class GoldAnswer:
    text: str
    start_char: int


@dataclass(frozen=True, slots=True)
class Example:
    """One reading-comprehension question about one passage, from any source."""

    id: str
    passage: str
    question: str
    title: str = ""
    answers: tuple[GoldAnswer, ...] = ()
    is_impossible: bool = False

    @classmethod
    def of(cls, passage: str, question: str, gold: str | Sequence[str] = (), id: str = "python") -> Example:
        """An Example of plain strings; each gold answer text is placed where it first occurs in the passage."""
        if not isinstance(passage, str) or not isinstance(question, str):
            raise TypeError("the passage and the question are strings")
        texts = (gold,) if isinstance(gold, str) else tuple(gold)
        missing = [text for text in texts if text not in passage]
        if missing:
            raise ValueError(f"the gold answer {missing[0]!r} is not in the passage")
        return cls(id=id, passage=passage, question=question,
                   answers=tuple(GoldAnswer(text, passage.find(text)) for text in texts))

    def to_dict(self) -> dict:
        return asdict(self)


def overlaps(start: int, end: int, other_start: int, other_end: int) -> bool:
    """Whether the characters [start, end) and [other_start, other_end) share one."""
    return start < other_end and other_start < end


@dataclass(frozen=True)
class Span:
    """A candidate answer: a token span of one window, mapped back to passage characters."""

    text: str
    start_char: int
    end_char: int
    start_token: int
    end_token: int
    window: int
    start_logit: float
    end_logit: float
    probability: float = 0.0

    @property
    def score(self) -> float:
        return self.start_logit + self.end_logit

    def overlaps(self, start_char: int, end_char: int) -> bool:
        """Whether the text at [start_char, end_char) shares a character with the span."""
        return overlaps(self.start_char, self.end_char, start_char, end_char)

    def to_dict(self) -> dict:
        return {**asdict(self), "score": self.score}


@dataclass(frozen=True)
class NoAnswer:
    """A SQuAD 2.0 model's "no answer": its score (start + end logit at [CLS], in the window where that is
    smallest), its probability in the softmax it shares with every answering span, the threshold on
    score − best span score, and whether the model abstained."""

    score: float
    probability: float
    threshold: float
    chosen: bool
    window: int = 0
    best_span_score: float | None = None  # the best valid token span's start + end logit (None: no valid span)

    def to_dict(self) -> dict:
        return asdict(self)

    def nbest_entry(self) -> dict:
        """The null as an n-best entry: text "", labelled "no answer"."""
        return {"text": "", "label": "no answer", "no_answer": True, "score": self.score,
                "probability": self.probability, "window": self.window}


@dataclass(frozen=True)
class AnswerSettings:
    """How an answer was decoded: the model, its windows (max_len tokens, doc_stride apart), the longest answer in
    tokens, the n-best list's length, and whether "no answer" was allowed."""

    model: str
    max_len: int
    doc_stride: int
    max_answer_tokens: int
    n_best: int
    allow_null: bool = False  # answers written before "no answer" was decoded had none


@dataclass(frozen=True)
class Answer:
    """The model's answer to an Example: the best span and the n-best list it won against, and, for a model
    that may abstain, its "no answer"."""

    question: str
    nbest: tuple[Span, ...]  # answering spans only: nbest:K of an explanation counts these
    n_windows: int
    settings: AnswerSettings | None = None  # None: an answer built by hand
    no_answer: NoAnswer | None = None  # None where decoding did not allow "no answer"

    @property
    def best(self) -> Span | None:
        """The best span, also when the model abstained (then it is the span it rejected)."""
        return self.nbest[0] if self.nbest else None

    @property
    def abstained(self) -> bool:
        return self.no_answer is not None and self.no_answer.chosen

    @property
    def text(self) -> str:
        return self.best.text if self.best and not self.abstained else ""

    @property
    def null_odds(self) -> float:
        """null score − best span score, what the threshold is on (the v2.0 script's na_prob); inf with no span."""
        null = self.no_answer
        if null is None:
            raise ValueError("this answer was decoded without 'no answer'")
        return float("inf") if null.best_span_score is None else null.score - null.best_span_score

    def ranked(self) -> list[dict]:
        """The n-best list as written out: the spans, and "no answer" at its place by probability."""
        entries = [{**span.to_dict(), "no_answer": False} for span in self.nbest]
        if self.no_answer is None:
            return entries
        place = sum(1 for span in self.nbest if span.probability > self.no_answer.probability)
        return [*entries[:place], self.no_answer.nbest_entry(), *entries[place:]]

    def to_dict(self) -> dict:
        best = None if self.abstained else self.best
        return {
            "question": self.question,
            "answer": self.text,
            "start_char": best.start_char if best else None,
            "end_char": best.end_char if best else None,
            "score": best.score if best else None,
            "probability": best.probability if best else None,
            "window": best.window if best else None,
            "n_windows": self.n_windows,
            "nbest": self.ranked(),
            "no_answer": self.no_answer.to_dict() if self.no_answer else None,
            "settings": asdict(self.settings) if self.settings else {},
        }

    @classmethod
    def from_dict(cls, data: dict) -> Answer:
        spans = tuple(Span(**{k: v for k, v in s.items() if k not in ("score", "no_answer")})
                      for s in data["nbest"] if not s.get("no_answer"))
        null = data.get("no_answer")
        return cls(question=data["question"], nbest=spans, n_windows=data["n_windows"], settings=AnswerSettings(**data["settings"]) if data["settings"] else None,
                   no_answer=NoAnswer(**null) if null else None)


@dataclass(frozen=True)
class Word:
    """A word as written (a spaCy token) of the question or passage, its Penn Treebank tag, and the window
    tokens (word-pieces) mapped onto it."""

    text: str
    start_char: int
    end_char: int
    segment: str  # "question" or "passage"
    tokens: tuple[int, ...]
    tag: str = ""

    @classmethod
    def from_dict(cls, data: dict) -> Word:
        return cls(**{**data, "tokens": tuple(data["tokens"])})

    @property
    def is_punctuation(self) -> bool:
        """Punctuation is no word: it counts in no category, window, top-k or distribution."""
        return is_punctuation(self.text)
