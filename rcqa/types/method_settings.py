"""What a layer-wise method read of the explanation settings, beyond what every method shares (the targets, span,
foil, windows and memory budget): recorded on its result and, alone of those fields, hashed in its cache key. Each
method's class (rcqa.attribution.layerwise) says which of these it read; the classes are shapes, named by what
they hold, so a result can be read back here, below the methods."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import ClassVar

PATH_FIELDS = ("baseline", "rule", "steps", "tolerance", "max_steps")  # ExplainSettings' fields of an IG path


@dataclass(frozen=True)
class MethodSettings:
    """A method's own settings; `reads`: the fields of ExplainSettings they are taken from."""

    kind: ClassVar[str]
    reads: ClassVar[tuple[str, ...]] = ()
    SHAPES: ClassVar[dict[str, type[MethodSettings]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        MethodSettings.SHAPES[cls.kind] = cls

    def to_dict(self) -> dict:
        """As a result records it: its kind, then its fields."""
        return {"kind": self.kind, **asdict(self)}

    @staticmethod
    def from_dict(data: dict) -> MethodSettings:
        """The settings of to_dict's dictionary; ValueError, in one sentence, for a kind no class has."""
        shape = MethodSettings.SHAPES.get(data.get("kind", ""))
        if shape is None:
            raise ValueError(f"unknown method settings {str(data.get('kind'))[:40]!r}; known: "
                             f"{', '.join(MethodSettings.SHAPES)}")
        return shape(**{f.name: data[f.name] for f in fields(shape)})


@dataclass(frozen=True)
class PathSettings(MethodSettings):
    """A path of gradients from a baseline (Integrated Gradients): where it starts, how it is integrated, with how
    many points and to which completeness tolerance."""

    kind = "path"
    reads = PATH_FIELDS

    baseline: str
    rule: str
    steps: int
    tolerance: float | None
    max_steps: int


@dataclass(frozen=True)
class RelevanceSettings(MethodSettings):
    """A relevance pass (AttnLRP): the ε its rules divide with. It is the rules' constant, no choice of the user's,
    so it is recorded and is no part of the key, which ExplainSettings' fields make."""

    kind = "relevance"

    epsilon: float


@dataclass(frozen=True)
class NoSettings(MethodSettings):
    """A method that reads none (gradient × activation: one gradient at the input's own states)."""

    kind = "none"


__all__ = ["PATH_FIELDS", "MethodSettings", "NoSettings", "PathSettings", "RelevanceSettings"]
