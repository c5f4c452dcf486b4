"""The View: everything that decides what the pages show, the values each of its fields may take, the IG settings
it stands for (span and foil held parsed, as SpanSpec and FoilSpec) and the views the presets set."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from rcqa.attribution.layerwise import layerwise_method
from rcqa.attribution.settings import PRESETS, FoilSpec, IGSettings, SpanSpec, resolve
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


DEFAULT_SETTINGS = resolve("default")  # a new view's IG settings: the default preset's, typed in one place


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

    def settings(self, settings: IGSettings) -> IGSettings:
        """The second explanation's settings: the gold span, or the contrast with another foil; another model
        keeps them."""
        if self.kind == "gold":
            return dataclasses.replace(settings, span="gold")
        if self.foil is not None:
            return dataclasses.replace(settings, contrast=self.foil.to_string())
        return settings


@dataclass
class View:
    """Everything that decides what the pages show; one link holds all of it (except long pasted text)."""

    model: str = field(default_factory=default_model)
    source: str = "gallery"
    example_id: str = GALLERY[0].id  # a gallery id, or an id in the uploaded file
    passage: str = ""  # a pasted passage
    question: str = GALLERY[0].question
    target: str = DEFAULT_SETTINGS.targets[0]
    span: SpanSpec = DEFAULT_SETTINGS.span_spec
    baseline: str = DEFAULT_SETTINGS.baseline
    rule: str = DEFAULT_SETTINGS.rule
    steps: int = DEFAULT_SETTINGS.steps
    tolerance: float | None = DEFAULT_SETTINGS.tolerance
    aggregation: Aggregation = PRESETS["default"].aggregation
    top_k: int = 5
    layer: int = 0  # of the top-k passage view
    variant: str = "full"
    first_layer: int = 0  # the pair of layers compared side by side; -1 is the last layer
    second_layer: int = -1
    projection: str = "tsne"
    projection_layer: int = -1
    knockout: str = "pad"  # what replaces knocked-out words' states (rcqa.lens.interventions)
    head_score: str = "knockout"  # the heads' grid: the knock-outs or a score (rcqa.figures.heads.HEAD_VIEWS)
    head_layer: int = 0  # the head whose attention is shown: its layer and its index there
    head: int = 0
    contrast: FoilSpec | None = DEFAULT_SETTINGS.foil  # explain why the span and not it (rcqa.attribution.contrast)
    windows: str = DEFAULT_SETTINGS.windows  # "all": the whole passage in one explanation (offered when it has several windows)
    versus: VersusSpec | None = None  # what the side-by-side view compares with
    method: str = DEFAULT_SETTINGS.method  # a layer-wise method's name (rcqa.attribution.layerwise)
    ends: str = "joined"  # "apart": the start and end logits too, in the same job (rcqa.ui.start_end)
    question_words: bool = False  # the heatmap's display toggles: the question's words, [CLS] and [SEP] beside the
    special_tokens: bool | None = None  # passage's (None: as the target has it, shows_special_tokens)
    run: str = ""  # the dataset run whose questions source "upload" offers (rcqa.ui.runs), by its folder's name

    def shows_special_tokens(self, explains_null: bool) -> bool:
        """Whether the heatmap shows [CLS] and [SEP]: as toggled, else where the target explains "no answer", which
        the model reads at [CLS]."""
        return explains_null if self.special_tokens is None else self.special_tokens

    def settings(self) -> IGSettings:
        """The engine's settings (ValueError if they are invalid); the span and foil go as the specs the view
        holds, so they are not parsed again."""
        chosen = {"targets": explained_targets(self.target, self.ends, self.contrast),
                  **{name: getattr(self, name) for name in _SETTINGS}}
        if self.windows not in (offered := method_windows(self.method)):  # kept for a method that reads them all
            chosen["windows"] = offered[0]
        return resolve("default", **chosen)


# the IGSettings fields a View holds beside its target, and the parsed form the view holds of those it parses
_SETTINGS = ("span", "baseline", "rule", "steps", "tolerance", "contrast", "windows", "method")
_PARSED = {"span": "span_spec", "contrast": "foil"}


def view_fields(settings: IGSettings) -> dict[str, Any]:
    """The View fields that hold these settings: View.settings read backwards (a view explains one target, with
    the start and end logits apart or not, the default max_steps and memory budget)."""
    data = settings.to_dict()
    return {"target": data["targets"][0], "ends": ends_of(data["targets"]),
            **{name: getattr(settings, _PARSED.get(name, name)) for name in _SETTINGS}}


# a preset sets IG's settings, not what is attributed: the windows explained, the method and the ends stay as chosen
PRESET_VIEWS = {name: {**{k: v for k, v in view_fields(p.settings).items() if k not in ("windows", "method", "ends")},
                       "aggregation": p.aggregation} for name, p in PRESETS.items()}
