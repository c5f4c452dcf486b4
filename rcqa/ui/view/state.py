"""The View: everything that decides what the pages show, the values each of its fields may take, and the
explanation settings it holds (ExplainSettings itself, so a link, a run's record and the API carry the same
settings without loss)."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from rcqa.attribution.layerwise import LAYERWISE_METHODS, layerwise_method, method_of
from rcqa.attribution.settings import PRESETS, ExplainSettings, FoilSpec, Preset, SpanSpec, resolve
from rcqa.attribution.targets import TARGETS
from rcqa.gallery import GALLERY
from rcqa.model import DEFAULT_MODEL
from rcqa.spans import N_BEST
from rcqa.types import Aggregation
from rcqa.ui.ends import ends_of, explained_targets

MODEL_ENV = "RCQA_MODEL"  # the app's default model: a folder or hub id (else the embedded model)
SOURCES = {"gallery": "Gallery", "upload": "Upload a SQuAD / DuoRC file", "paste": "Paste a passage"}
SPANS = {"predicted": "the model's predicted answer (the paper)", "gold": "the gold answer"}
NBEST_SPANS = tuple(f"nbest:{rank}" for rank in range(N_BEST))  # "why not this span?": the K-th best span
ABSTENTION_TARGET = "answer_vs_null"  # what an abstention is explained by unless a target was chosen
PICKABLE_TARGETS = tuple(name for name in TARGETS if name != "contrast")  # a contrast is asked for by its foil
NAMED_FOILS = {None: "no contrast: explain the span alone", "runner-up": "the best span clear of the answer",
               "gold": "the gold answer", "null": '"no answer"',
               "distractor-number": "the best-scoring other number (quantifier questions)"}
TOLERANCES = (None, 0.001, 0.005, 0.01, 0.05)
MAX_TOP_K = 20
VERSUS_KINDS = {"gold": "the gold span", "model": "another model", "foil": "another foil"}  # side by side: B is


def default_model() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_MODEL


DEFAULT_SETTINGS = resolve("default")  # a new view's explanation settings: the default preset's, typed in one place


def method_windows(method: str) -> tuple[str, ...]:
    """The windows a view may explain under this method (WINDOWS' names): the method's class says."""
    return layerwise_method(method).windows


def default_target(method: str) -> str:
    """The target a view explains under this method while none was picked (an answer's: rcqa.attribution.settings)."""
    return resolve("default", method=method).targets[0]


@dataclass(frozen=True)
class VersusSpec:
    """What the side-by-side view sets against the current explanation, parsed once from its string form: the gold
    span explained ("gold"), another model on the same question ("model:NAME") or the contrast with another foil
    ("foil:FOIL"); to_string gives the form back."""

    kind: str  # one of VERSUS_KINDS
    model: str | None = None  # model's NAME: a folder or hub id (a link's is checked against the catalog: url.py)
    foil: FoilSpec | None = None  # foil's FOIL

    def __post_init__(self):
        if self.kind not in VERSUS_KINDS or (self.model is None) != (self.kind != "model") or \
                (self.foil is None) != (self.kind != "foil"):
            raise ValueError("compare with gold, model:NAME (a model this server offers) or foil:FOIL")

    @classmethod
    def parse(cls, text: str) -> VersusSpec:
        """The spec of a string form; ValueError, in one sentence, for anything else (a foil's says what a foil
        may be)."""
        kind, _, value = text.partition(":")
        if text == "gold":
            return cls("gold")
        if kind == "model" and value:
            return cls("model", model=value)
        if kind == "foil":
            return cls("foil", foil=FoilSpec.parse(value))
        raise ValueError("compare with gold, model:NAME (a model this server offers) or foil:FOIL")

    def to_string(self) -> str:
        return {"model": f"model:{self.model}", "foil": f"foil:{self.foil}"}.get(self.kind, self.kind)

    __str__ = to_string

    def settings(self, settings: ExplainSettings) -> ExplainSettings:
        """The second explanation's settings: the gold span, or the contrast with another foil; another model
        keeps them."""
        if self.kind == "gold":
            return dataclasses.replace(settings, span=SpanSpec("gold"))
        if self.foil is not None:
            return dataclasses.replace(settings, contrast=self.foil)
        return settings


T = TypeVar("T")


class Setting(Generic[T]):
    """A View attribute that is one field of the settings it holds (View.explain): read from them, and a change
    replaces them (ValueError, from ExplainSettings, for a value they refuse), so widgets and links reach the
    settings by the field's name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, view: View, owner: type | None = None) -> T:
        return getattr(view.explain, self.name)

    def __set__(self, view: View, value: T) -> None:
        changed: dict[str, Any] = {self.name: value}
        view.explain = dataclasses.replace(view.explain, **changed)


@dataclass
class View:
    """Everything that decides what the pages show; one link holds all of it (except long pasted text)."""

    model: str = field(default_factory=default_model)
    source: str = "gallery"
    example_id: str = GALLERY[0].id  # a gallery id, or an id in the uploaded file
    passage: str = ""  # a pasted passage
    question: str = GALLERY[0].question
    # the explanation settings, but for the targets beyond the one chosen, which `ends` adds (settings())
    explain: ExplainSettings = dataclasses.replace(DEFAULT_SETTINGS, targets=DEFAULT_SETTINGS.targets[:1])
    aggregation: Aggregation = PRESETS["default"].aggregation
    top_k: int = 5
    layer: int = 0  # of the top-k passage view
    granularity: str = "sentence"  # the units of the sentences tab: "sentence" or "phrase" (rcqa.types.granularity)
    variant: str = "full"
    first_layer: int = 0  # the pair of layers compared side by side; -1 is the last layer
    second_layer: int = -1
    pair_units: str = "word"  # what the two layers are compared by: words, or as the sentences tab's units
    projection: str = "tsne"
    projection_layer: int = -1
    knockout: str = "pad"  # what replaces knocked-out words' states (rcqa.lens.interventions)
    head_score: str = "knockout"  # the heads' grid: the knock-outs or a score (rcqa.figures.heads.HEAD_VIEWS)
    head_layer: int = 0  # the head whose attention is shown: its layer and its index there
    head: int = 0
    versus: VersusSpec | None = None  # what the side-by-side view compares with
    ends: str = "joined"  # "apart": the start and end logits too, in the same job (rcqa.ui.start_end)
    question_words: bool = False  # the heatmap's display toggles: the question's words, [CLS] and [SEP] beside the
    special_tokens: bool | None = None  # passage's (None: as the target has it, shows_special_tokens)
    run: str = ""  # the dataset run whose questions source "upload" offers (rcqa.ui.runs), by its folder's name

    # the settings' fields the pages and links change one at a time (the rest travel in explain)
    span = Setting[SpanSpec]()
    baseline = Setting[str]()
    rule = Setting[str]()
    steps = Setting[int]()
    tolerance = Setting[float | None]()
    max_steps = Setting[int]()
    memory_budget_mb = Setting[int]()
    allow_null = Setting[bool | None]()
    contrast = Setting[FoilSpec | None]()  # explain why the span and not it (rcqa.attribution.contrast)
    windows = Setting[str]()  # "all": the whole passage in one explanation (offered when it has several windows)
    method = Setting[str]()  # a layer-wise method's name (rcqa.attribution.layerwise)

    @property
    def target(self) -> str:
        """The target chosen: the settings' one target."""
        return self.explain.targets[0]

    @target.setter
    def target(self, name: str) -> None:
        self.explain = dataclasses.replace(self.explain, targets=(name,))

    def shows_special_tokens(self, explains_null: bool) -> bool:
        """Whether the heatmap shows [CLS] and [SEP]: as toggled, else where the target explains "no answer", which
        the model reads at [CLS]."""
        return explains_null if self.special_tokens is None else self.special_tokens

    def settings(self) -> ExplainSettings:
        """The engine's settings: the view's, with the start and end logits where they are apart, over the windows
        the method reads (ValueError where the method cannot explain with them)."""
        chosen = dataclasses.replace(self.explain, targets=explained_targets(self.target, self.ends, self.contrast))
        if chosen.windows not in (offered := method_windows(chosen.method)):  # kept for a method that reads them all
            chosen = dataclasses.replace(chosen, windows=offered[0])
        method_of(chosen)
        return chosen

    def apply(self, preset: Preset) -> None:
        """A preset's settings and token score; the windows explained, the method and the ends stay as chosen."""
        self.explain = dataclasses.replace(preset.settings, targets=preset.settings.targets[:1],
                                           windows=self.windows, method=self.method)
        self.aggregation = preset.aggregation


def view_fields(settings: ExplainSettings) -> dict[str, Any]:
    """The View fields that hold these settings: View.settings read backwards (a view explains one target, with
    the start and end logits apart or not)."""
    return {"explain": dataclasses.replace(settings, targets=settings.targets[:1]), "ends": ends_of(settings.targets)}


def opening_settings() -> list[ExplainSettings]:
    """The settings a first visit explains (rcqa.attribution.shipped ships the gallery's): Explore's with each method
    a visitor may choose, and beside each the runner-up contrast Side by side first compares it with."""
    settings = []
    for method in LAYERWISE_METHODS:
        view = View()
        view.method = method  # as the Method radio sets it, and fit_target the target of an answered question
        view.target = default_target(method)
        settings += [view.settings(), VersusSpec("foil", foil=FoilSpec("runner-up")).settings(view.settings())]
    return settings
