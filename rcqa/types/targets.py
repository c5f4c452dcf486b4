"""What a result explains: per target, the function's name, the token span it is taken at, the span's text and
window, and for a contrast the Foil it is weighed against."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Protocol

NULL_TARGETS = ("null", "answer_vs_null")  # targets that explain "no answer": their span is the best one, rejected


@dataclass(frozen=True)
class Foil:
    """The span an explanation is contrasted with: where it is (characters; None for "no answer"), the window and
    tokens it is read at, its start + end logit there, and its probability among the model's answers (None for "no
    answer" when the answer was decoded without it)."""

    request: str  # the FOIL as asked: nbest:1, gold, null, text:..., runner-up, distractor-number
    text: str
    start_char: int | None
    end_char: int | None
    window: int
    start_token: int
    end_token: int
    score: float
    probability: float | None

    def to_dict(self, explained_window: int) -> dict:
        return {**asdict(self), "explained_window": explained_window,
                "in_explained_window": self.window == explained_window}

    @classmethod
    def from_dict(cls, data: dict) -> Foil:
        """The foil of to_dict's dictionary (the explained window it adds is the target's own)."""
        return cls(**{f.name: data[f.name] for f in fields(cls)})


class TargetFunction(Protocol):
    """What the engine's target (rcqa.attribution.targets.Target) tells a result about itself."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def start_token(self) -> int: ...
    @property
    def end_token(self) -> int: ...
    @property
    def null_token(self) -> int: ...
    @property
    def foil_start_token(self) -> int | None: ...
    @property
    def foil_end_token(self) -> int | None: ...
    @property
    def foil_score(self) -> float: ...


@dataclass(frozen=True)
class ExplainedTarget:
    """One target of a result: its name and description, the tokens start_token..end_token of the result's tokens
    it is taken at, the span's text and the window it lies in. A contrast holds its Foil and where its logits were
    read (foil_start_token / foil_end_token among the result's tokens, else the constant foil_score); a null
    target, the [CLS] token it reads "no answer" at (null_token, in null_window for a whole passage)."""

    name: str
    description: str
    start_token: int
    end_token: int
    span: str
    window: int
    foil: Foil | None = None
    foil_start_token: int | None = None
    foil_end_token: int | None = None
    foil_score: float | None = None
    null_token: int | None = None
    null_window: int | None = None

    @property
    def tokens(self) -> tuple[int, int]:
        return self.start_token, self.end_token

    @property
    def explains_null(self) -> bool:
        """Whether the target explains "no answer": its span is then the best one, rejected."""
        return self.name in NULL_TARGETS

    def to_dict(self) -> dict:
        """The target as results have always written it: a contrast's foil reading and foil, a null target's
        [CLS], only where they apply."""
        data = {"name": self.name, "description": self.description, "start_token": self.start_token,
                "end_token": self.end_token, "span": self.span, "window": self.window}
        if self.name == "contrast":
            data |= {"foil_start_token": self.foil_start_token, "foil_end_token": self.foil_end_token,
                     "foil_score": self.foil_score}
        for optional in ("null_token", "null_window"):
            if getattr(self, optional) is not None:
                data[optional] = getattr(self, optional)
        if self.foil is not None:
            data["foil"] = self.foil.to_dict(self.window)
        return data

    @classmethod
    def from_dict(cls, data: dict, window: int) -> ExplainedTarget:
        """The target of to_dict's dictionary; `window` is the result's own, for files written before targets
        recorded theirs (one window's results)."""
        known = {f.name for f in fields(cls)} - {"foil"}
        foil = data.get("foil")
        return cls(**{"window": window, **{k: v for k, v in data.items() if k in known}},
                   foil=Foil.from_dict(foil) if foil else None)


def explained_target(target: TargetFunction, span: str, window: int, foil: Foil | None = None,
                     null_window: int | None = None) -> ExplainedTarget:
    """What a result records of one engine target, taken at `span` (its text) in `window`; a contrast's foil and a
    whole passage's null window where they apply."""
    contrast = target.name == "contrast"
    null = target.name in NULL_TARGETS
    return ExplainedTarget(
        target.name, target.description, target.start_token, target.end_token, span, window,
        foil=foil if contrast else None,
        foil_start_token=target.foil_start_token if contrast else None,
        foil_end_token=target.foil_end_token if contrast else None,
        foil_score=target.foil_score if contrast else None,
        null_token=target.null_token if null else None, null_window=null_window if null else None)
