"""The data types that flow through the library: examples in, answers out."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class GoldAnswer:
    text: str
    start_char: int


@dataclass(frozen=True)
class Example:
    """One reading-comprehension question about one passage, from any source."""

    id: str
    passage: str
    question: str
    title: str = ""
    answers: tuple[GoldAnswer, ...] = ()
    is_impossible: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


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

    def to_dict(self) -> dict:
        return {**asdict(self), "score": self.score}


@dataclass(frozen=True)
class Answer:
    """The model's answer to an Example: the best span and the n-best list it won against."""

    question: str
    nbest: tuple[Span, ...]
    n_windows: int
    settings: dict = field(default_factory=dict)

    @property
    def best(self) -> Span | None:
        return self.nbest[0] if self.nbest else None

    @property
    def text(self) -> str:
        return self.best.text if self.best else ""

    def to_dict(self) -> dict:
        best = self.best
        return {
            "question": self.question,
            "answer": self.text,
            "start_char": best.start_char if best else None,
            "end_char": best.end_char if best else None,
            "score": best.score if best else None,
            "probability": best.probability if best else None,
            "window": best.window if best else None,
            "n_windows": self.n_windows,
            "nbest": [span.to_dict() for span in self.nbest],
            "settings": self.settings,
        }
