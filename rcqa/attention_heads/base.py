"""The interface every head score shares (one small class per score, as Captum has one per method): what it is
called and how the fronts name it, what of the knock-out it predicts, its price in block passes and memory, and how
it is computed from the case every score shares. A subclass that names itself registers itself in HEAD_SCORES; the
imports in rcqa.attention_heads.registry are the registry lines (docs/heads.md: adding a head score)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypeVar, cast

import numpy as np

from rcqa.attention_heads.memory import HeadsWindow
from rcqa.attention_heads.scores import HeadCase
from rcqa.model import QAModel

# what of a head's knock-out (Δ = F after − F before) a score's value predicts: the drop −Δ (a signed score, + where
# the head raises F), its size |Δ|, or Δ itself
Predicts = Literal["drop", "size", "change"]
Told = Callable[[float, str], None]  # (the share of the score done, where it is)
Kept = TypeVar("Kept")

HEAD_SCORES: dict[str, HeadScore] = {}  # name -> the score, in the order the registry imports them


@dataclass
class SharedCase:
    """The case every score of one question reads, with what a pass computed for it kept, so that two scores that
    read the same pass (the gradient at the gates: its magnitude and its signed first-order estimate) run it once."""

    qa_model: QAModel
    case: HeadCase
    kept: dict[Callable, object] = field(default_factory=dict)

    def once(self, compute: Callable[[QAModel, HeadCase], Kept]) -> Kept:
        """compute(model, case), run the first time a score asks for it."""
        if compute not in self.kept:
            self.kept[compute] = compute(self.qa_model, self.case)
        return cast(Kept, self.kept[compute])


@dataclass(frozen=True)
class Scored:
    """A score of every head (layers × heads) and the checks it carries (HeadScores' `conservation` or
    `completeness`: per layer, its lists)."""

    heads: np.ndarray
    checks: dict[str, dict[str, list[float]]] = field(default_factory=dict)


class HeadScore(ABC):
    """A way of scoring every attention head of the case's window for F, the span's log-likelihood."""

    name: ClassVar[str]  # as results, runs and links store it
    label: ClassVar[str]  # as the page's choice names it
    short: ClassVar[str]  # as a sentence names it ("the gradient")
    description: ClassVar[str]  # what it is, as the grid's title writes it ("Each head's …")
    predicts: ClassVar[Predicts]
    step: ClassVar[str]  # the progress bar's text for it: before its first report, and its report when done at once
    # the pass it runs, named for the score that runs it: scores that read one pass share its name, so the price
    # counts the pass once
    pass_name: ClassVar[str]
    measured_seconds: ClassVar[float]  # its pass on the lighthouse question, where rcqa.attention_heads.cost calibrates

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a score, not an intermediate base
            if not hasattr(cls, "pass_name"):
                cls.pass_name = cls.name
            HEAD_SCORES[cls.name] = cls()

    @abstractmethod
    def passes(self, layers: int, heads: int) -> float:
        """Its pass's block passes (rcqa.attribution.cost's unit) for a model of `layers` blocks of `heads` heads."""

    @abstractmethod
    def memory_bytes(self, window: HeadsWindow, budget_mb: float) -> int:
        """The most its pass holds over the loaded process on this window, its batches within `budget_mb`."""

    @abstractmethod
    def score(self, shared: SharedCase, told: Told) -> Scored:
        """Every head scored; `told` hears the share of it done as it goes, the last time at 1."""

    def knockout_effect(self, delta: np.ndarray) -> np.ndarray:
        """What of the knock-outs' Δ the score is read against: its agreement is Spearman's ρ with this."""
        return {"drop": -delta, "size": np.abs(delta), "change": delta}[self.predicts]

    def importance(self, values: np.ndarray) -> np.ndarray:
        """The score's values oriented so that the larger, the more the head matters: a predicted change is a
        predicted drop negated; a drop or a size is read as it is."""
        return -values if self.predicts == "change" else values

    @property
    def signed(self) -> bool:
        """Whether its values keep a sign (a red-blue grid around 0)."""
        return self.predicts != "size"


def head_score(name: str) -> HeadScore:
    """The registered score called `name`; ValueError, naming them, for any other."""
    if name not in HEAD_SCORES:
        raise ValueError(f"unknown head score {str(name)[:40]!r}; choose one of {', '.join(HEAD_SCORES)}")
    return HEAD_SCORES[name]
