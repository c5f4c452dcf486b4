"""The settings a result records: ExplainSettings, everything that changes an explanation's numbers (part of every cache
key), with the names each of its fields may take; and Windowing, how the passage was cut into the windows the model
read. They sit with the results, below the engine that reads them (rcqa.attribution.settings adds the presets)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from rcqa.types.method_settings import PATH_FIELDS

RULES = ("gausslegendre", "riemann_right", "paper_trapezoid")  # rcqa.attribution.quadrature's nodes and weights
PAPER_STEPS = 20  # the released code of Ramnath et al. (2020): α = k/20, k = 0..19

BASELINES = {
    "pad": "the layer's activations for the input with every token but [CLS]/[SEP] replaced by [PAD] (Captum's layer IG)",
    "mask": "the layer's activations for the input with every token but [CLS]/[SEP] replaced by [MASK]",
    "zero": "the zero vector at the layer (the paper)",
}
FOILS = {  # what --contrast FOIL may name: the span the explained one is contrasted with
    "nbest:K": "the K-th n-best span (0-based, as --span)",
    "gold": "the gold answer",
    "null": '"no answer" (start = end = [CLS], in the window where its score is smallest, as SQuAD 2.0 decodes)',
    "text:STRING": "a span of the passage, as written (the best-scoring place where it occurs, outside the span)",
    "runner-up": "the most probable answer that does not overlap the explained span (in the n-best list, else "
                 "among the 200 most probable)",
    "distractor-number": "for a quantifier question: the best-scoring other number (a word tagged CD) of the passage",
}
MAX_FOIL_TEXT = 300  # characters of text:STRING (a foil is a span, not a passage)
_FOIL_KINDS = tuple(name.partition(":")[0] for name in FOILS)  # nbest, gold, null, text, runner-up, ...


SPANS = {  # what --span may name: the span whose targets are explained
    "predicted": "the model's best span (the paper), also when it answered \"no answer\"",
    "gold": "the gold answer",
    "nbest:K": "the K-th n-best span (0-based)",
}
_MAX_RANK_DIGITS = 3  # nbest:K names a rank below 1000


def _rank(text: str) -> int | None:
    """K of nbest:K, a whole number of at most three ASCII digits; None for anything else."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= _MAX_RANK_DIGITS else None


@dataclass(frozen=True)
class SpanSpec:
    """The span an explanation's targets are taken at, parsed once from its string form ('predicted', 'gold',
    'nbest:K'), which to_string gives back."""

    kind: str  # "predicted", "gold" or "nbest"
    rank: int = 0  # nbest's K

    def __post_init__(self):
        if self.kind not in ("predicted", "gold", "nbest") or self.rank < 0 or (self.rank and self.kind != "nbest"):
            raise ValueError(f"unknown span kind {self.kind!r} (rank {self.rank}); use {', '.join(SPANS)}")

    @classmethod
    def parse(cls, span: SpanSpec | str) -> SpanSpec:
        """The spec of a span's string form (a spec is returned as it is); ValueError, in one sentence, for
        anything else."""
        if isinstance(span, SpanSpec):
            return span
        if span in ("predicted", "gold"):
            return cls(span)
        kind, _, argument = str(span).partition(":")
        if kind == "nbest" and (rank := _rank(argument)) is not None:
            return cls("nbest", rank)
        raise ValueError(f"unknown span {str(span)[:40]!r}; use predicted, gold or nbest:K (K a whole number "
                         f"under 1000)")

    def to_string(self) -> str:
        return f"nbest:{self.rank}" if self.kind == "nbest" else self.kind

    __str__ = to_string


@dataclass(frozen=True)
class FoilSpec:
    """The foil a contrast names, parsed once from its string form (FOILS), which to_string gives back."""

    kind: str  # "nbest", "text", "gold", "null", "runner-up" or "distractor-number"
    rank: int | None = None  # nbest's K
    text: str | None = None  # text's STRING

    def __post_init__(self):
        if self.kind not in _FOIL_KINDS or (self.rank is None) != (self.kind != "nbest") or \
                (self.text is None) != (self.kind != "text"):
            raise ValueError(f"unknown foil kind {self.kind!r}; use {', '.join(FOILS)}")
        if self.text is not None and not (self.text.strip() and len(self.text) <= MAX_FOIL_TEXT):
            raise ValueError(f"a text: foil is some text of at most {MAX_FOIL_TEXT} characters")

    @classmethod
    def parse(cls, foil: FoilSpec | str) -> FoilSpec:
        """The spec of a FOIL (a spec is returned as it is); ValueError, in one sentence, for anything else."""
        if isinstance(foil, FoilSpec):
            return foil
        kind, _, argument = str(foil).partition(":")
        if kind == "nbest" and (rank := _rank(argument)) is not None:
            return cls("nbest", rank=rank)
        if kind == "text" and argument.strip():
            return cls("text", text=argument)
        if kind in ("nbest", "text") or foil not in _FOIL_KINDS:
            raise ValueError(f"unknown foil {str(foil)[:40]!r}; use {', '.join(FOILS)}")
        return cls(foil)

    def to_string(self) -> str:
        return {"nbest": f"nbest:{self.rank}", "text": f"text:{self.text}"}.get(self.kind, self.kind)

    __str__ = to_string


DEFAULT_METHOD = "integrated_gradients"  # what results written before there were methods were explained by

WINDOWS = {
    "answer": "the window holding the explained span (the default)",
    "all": "every window of the passage in one explanation, with one target over all of them (about N× the time)",
}


@dataclass(frozen=True)
class ExplainSettings:
    """Everything that changes an explanation's numbers, the layer-wise method among them; part of every cache key.
    The span and the foil are held parsed (SpanSpec, FoilSpec); their string forms, which to_dict writes, are
    parsed once here when given instead."""

    targets: tuple[str, ...] = ("span_log_prob",)  # every word gets a share at every layer (README: the target)
    span: SpanSpec = SpanSpec("predicted")  # the model's best span, the gold one or the K-th best (0-based)
    baseline: str = "pad"
    rule: str = "gausslegendre"
    steps: int = 8
    tolerance: float | None = 0.01  # Gauss–Legendre: refine panels until every layer's completeness error is under it
    max_steps: int = 128
    memory_budget_mb: int = 1024
    allow_null: bool | None = None  # decode with "no answer" (rcqa.qa.answer); None: as the model's card says
    contrast: FoilSpec | None = None  # the foil: adds, first, the target log p(span) − log p(foil) (rcqa.attribution.contrast)
    windows: str = "answer"  # "answer": the explained span's window; "all": every window (rcqa.attribution.passage)
    method: str = DEFAULT_METHOD  # a layer-wise method's name (rcqa.attribution.layerwise, which checks it)

    def __post_init__(self):
        if self.baseline not in BASELINES:
            raise ValueError(f"unknown baseline {self.baseline!r}; choose one of {', '.join(BASELINES)}")
        if self.rule not in RULES:
            raise ValueError(f"unknown integration rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.rule == "paper_trapezoid":  # a fixed rule: record the steps it really takes
            object.__setattr__(self, "steps", PAPER_STEPS)
            object.__setattr__(self, "max_steps", max(self.max_steps, PAPER_STEPS))
        if self.windows not in WINDOWS:
            raise ValueError(f"unknown windows {self.windows!r}; choose one of {', '.join(WINDOWS)}")
        if not 1 <= self.steps <= self.max_steps:
            raise ValueError(f"steps must be between 1 and max_steps ({self.max_steps})")
        if "contrast" in self.targets:
            raise ValueError("the contrast target is asked for by its foil: contrast=FOIL (--contrast FOIL)")
        # a string form (a user's, a record's) is parsed once, here, so a bad span or foil is refused at once
        object.__setattr__(self, "span", SpanSpec.parse(self.span))
        if self.contrast is not None:
            object.__setattr__(self, "contrast", FoilSpec.parse(self.contrast))

    @property
    def reads_gold(self) -> bool:
        """Whether the explanation reads the example's gold answer: as its span or as its foil."""
        return self.span.kind == "gold" or (self.contrast is not None and self.contrast.kind == "gold")

    @classmethod
    def paper(cls) -> ExplainSettings:
        """The released code of the EMNLP 2020 paper: zero baseline, 20-point trapezoid, its F."""
        return cls(targets=("paper_confidence",), baseline="zero", rule="paper_trapezoid", steps=20, tolerance=None)

    @classmethod
    def paper_text(cls) -> ExplainSettings:
        """The EMNLP 2020 paper's text: zero baseline, 50 right-Riemann steps, its F (the squared norm is the
        token score, an analysis setting: see PRESETS)."""
        return cls(targets=("paper_confidence",), baseline="zero", rule="riemann_right", steps=50, tolerance=None)

    def to_dict(self, reads: tuple[str, ...] = PATH_FIELDS) -> dict:
        """The settings as JSON-ready values (targets a list); from_dict reads it back. allow_null and contrast are
        left out while they are None, windows while it is "answer" and method while it is IG, so cache keys and run manifests written before
        they existed still match; of the path's fields (PATH_FIELDS), those a method `reads` (a result records only
        what its method read: rcqa.types.method_settings)."""
        data = {**asdict(self), "targets": list(self.targets), "span": self.span.to_string(),
                "contrast": None if self.contrast is None else self.contrast.to_string()}
        for unread in set(PATH_FIELDS) - set(reads):
            del data[unread]
        for optional in ("allow_null", "contrast"):
            if data[optional] is None:
                del data[optional]
        if data["windows"] == "answer":
            del data["windows"]
        if data["method"] == DEFAULT_METHOD:
            del data["method"]
        return data

    def keyed(self, reads: tuple[str, ...]) -> ExplainSettings:
        """These settings with the path's fields a method does not `read` at their defaults: what a cache key hashes,
        so that changing a field the method never reads finds the same result (and results kept before, whose key
        hashed every field, are found while those fields had their defaults)."""
        defaults = ExplainSettings()
        return replace(self, **{name: getattr(defaults, name) for name in PATH_FIELDS if name not in reads})

    @classmethod
    def from_dict(cls, data: dict) -> ExplainSettings:
        """The settings of to_dict's dictionary, or of any part of it (the other fields keep their defaults)."""
        return cls().changed(**data)

    def changed(self, **changes: Any) -> ExplainSettings:
        """These settings with some fields changed, each as a spec or in the form to_dict writes it (targets a
        list); ValueError, naming them, for names that are no setting."""
        known = {f.name for f in fields(self)}
        if unknown := sorted(set(changes) - known):
            raise ValueError(f"unknown explanation setting{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))}; the settings are {', '.join(sorted(known))}")
        if "targets" in changes:
            if isinstance(changes["targets"], str):
                raise ValueError("targets must be a list of target names, not one string")
            changes = {**changes, "targets": tuple(changes["targets"])}
        return replace(self, **changes)


IGSettings = ExplainSettings  # the name before a layer-wise method was more than IG, for code written against it


@dataclass(frozen=True)
class Windowing:
    """How the passage was cut into windows (the model's max_len tokens, doc_stride apart) and, for a whole-passage
    explanation, how many windows it has and which of them the explanation read."""

    max_len: int
    doc_stride: int
    n_windows: int | None = None  # a whole passage's (settings.windows == "all"); None for one window
    windows_read: tuple[int, ...] | None = None

    def to_dict(self) -> dict:
        """As results recorded it beside the explanation settings: the whole passage's two fields only when set."""
        data: dict[str, int | list[int]] = {"max_len": self.max_len, "doc_stride": self.doc_stride}
        if self.n_windows is not None:
            data["n_windows"] = self.n_windows
        if self.windows_read is not None:
            data["windows_read"] = list(self.windows_read)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Windowing:
        read = data.get("windows_read")
        return cls(data["max_len"], data["doc_stride"], data.get("n_windows"),
                   tuple(read) if read is not None else None)


WINDOWING_FIELDS = tuple(f.name for f in fields(Windowing))


def split_recorded_settings(recorded: dict) -> tuple[ExplainSettings, Windowing]:
    """A result file's one "settings" object, the explanation settings and the windowing side by side, read apart."""
    return (ExplainSettings.from_dict({k: v for k, v in recorded.items() if k not in WINDOWING_FIELDS}),
            Windowing.from_dict(recorded))
