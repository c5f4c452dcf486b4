"""The interface every layer-wise method shares (Captum's one class per method on a common base): what it is
called and how the fronts name and colour it, what it supports, what it costs, and how it explains the layers of
the explained window. A subclass that names itself registers itself (inseq's registration by subclass); the
package's __init__ imports each method's module, which is its registry line."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from rcqa.attribution.engine import LayerResult
from rcqa.attribution.passage import PassageScope, WindowProgress
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.targets import Target
from rcqa.attribution.window import ExplainedWindow, token_words
from rcqa.model import QAModel
from rcqa.qa import RunWindows
from rcqa.spans import Windows
from rcqa.types import Example, Foil, Word
from rcqa.types.method_settings import MethodSettings
from rcqa.types.settings import WINDOWS, ExplainSettings

OnLayer = Callable[[LayerResult | WindowProgress], None]


@dataclass(frozen=True)
class ExplainedTargets:
    """The window an explanation is taken at and its targets (a contrast first), with the foil it names."""

    window: ExplainedWindow
    targets: list[Target]
    foil: Foil | None


@dataclass(frozen=True)
class Tokens:
    """What a result records of the tokens it explains: one window's, or the whole passage's."""

    ids: Sequence[int]
    offsets: Sequence[tuple[int, int]]
    segments: Sequence[str]
    words: list[Word]
    targets: list[Target]  # the explained targets, placed among these tokens
    null_window: int | None  # the whole passage: the window "no answer" is read in (None for one window)
    windows: tuple[int, tuple[int, ...]] | None  # the whole passage: how many windows, and those read

    @classmethod
    def of_window(cls, example: Example, explained: ExplainedTargets) -> Tokens:
        window = explained.window
        return cls(window.inputs["input_ids"][0].tolist(), window.offsets, window.segments,
                   window.words(example.passage), explained.targets, None, None)

    @classmethod
    def of_passage(cls, example: Example, explained: ExplainedTargets, scope: PassageScope) -> Tokens:
        layout = scope.layout
        return cls(layout.ids, layout.offsets, layout.segments,
                   token_words(layout.offsets, layout.segments, example.question, example.passage),
                   scope.placed(explained.targets, explained.foil, lambda w, t: layout.positions[w][t]),
                   scope.null_window, (len(scope.stacks), tuple(scope.read)))


@dataclass(frozen=True)
class ExplainedLayers:
    """What a method hands rcqa.attribution.explanation to build the result of: the tokens it explained, every
    layer's scores and checks, the layer outputs a result keeps and which of its tokens they are (None: all)."""

    tokens: Tokens
    layers: list[LayerResult]
    hidden_states: np.ndarray
    hidden_tokens: list[int] | None


LAYERWISE_METHODS: dict[str, LayerwiseMethod] = {}  # name -> the method, in the order the package registers them


class LayerwiseMethod(ABC):
    """A way of scoring every token at the output of every layer for the explained targets."""

    name: ClassVar[str]  # as settings, links and the CLI write it
    label: ClassVar[str]  # as the pages name it
    colour: ClassVar[str]  # as the figures draw it
    description: ClassVar[str]  # one sentence for the CLI's help
    caption: ClassVar[str]  # the line under Explore's title: the method the explanations below are made with
    windows: ClassVar[tuple[str, ...]] = tuple(WINDOWS)  # the windows it explains (ExplainSettings.windows)
    default_targets: ClassVar[tuple[str, ...] | None] = None  # explained where none is asked for (None: a preset's)
    families: ClassVar[tuple[str, ...] | None] = None  # the model families (config.model_type) it explains; None: all
    # what closes a layer's completeness gap, for a method that promises completeness; None where it promises none
    # (its gap is information about the method, never a fault the user could mend)
    completeness_remedy: ClassVar[str | None] = None
    # its view at the embeddings' output on the methods page (rcqa.attribution.methods.layer_embeddings): whether it
    # is compared there by default, and the one ranking it had there before each method was ranked both ways
    embeddings_description: ClassVar[str]  # one sentence on that view, for the methods page and a comparison's record
    embeddings_compared: ClassVar[bool] = True
    # the dataset runner's goal, in questions an hour on 2 CPU cores with the default model and settings (bench
    # --runner, rcqa.dataset.throughput); None where none is set
    runner_goal_per_hour: ClassVar[int | None] = None
    ranking_before_both: ClassVar[str] = "magnitude"
    batches: ClassVar[bool] = False  # whether it explains several examples from shared passes (explain_batch)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a method, not an intermediate base
            LAYERWISE_METHODS[cls.name] = cls()

    @property
    def short_label(self) -> str:
        """The label without its note in brackets ("AttnLRP (one pass)": "AttnLRP")."""
        return self.label.split(" (")[0]

    def check(self, settings: ExplainSettings) -> None:
        """ValueError, in one sentence, for settings this method cannot explain with."""
        if settings.windows not in self.windows:
            raise ValueError(f"{self.label} explains {' or '.join(WINDOWS[w] for w in self.windows)} only; use "
                             f"windows={self.windows[0]!r} with it")

    def model_refusal(self, qa_model: QAModel) -> str | None:
        """Why this method cannot explain this model, in one sentence naming its family; None where it can."""
        family = qa_model.config.model_type
        if self.families is None or family in self.families:
            return None
        return f"{self.label} explains {', '.join(self.families)} models, not {family}: choose another method."

    def target_note(self, target: str) -> str:
        """What the Target choice adds to a target's name under this method ("" where its name says it all)."""
        return ""

    @abstractmethod
    def used_settings(self, settings: ExplainSettings) -> MethodSettings:
        """What this method reads of the settings, in its own class (rcqa.types.method_settings): recorded on its
        result, and of the path's fields the only ones its cache key hashes (cache_settings)."""

    def cache_settings(self, settings: ExplainSettings) -> ExplainSettings:
        """The settings as a cache key hashes them: the path's fields this method does not read at their defaults."""
        return settings.keyed(self.used_settings(settings).reads)

    def settings_text(self, settings: ExplainSettings) -> str:
        """The settings the numbers depend on beside the target, as a figure's settings line writes them."""
        return f"baseline: {settings.baseline} · {settings.rule} rule"

    @abstractmethod
    def path_points(self, settings: ExplainSettings, blocks: int) -> float:
        """What an explanation costs a layer, in layer-wise IG's path points (each a forward and a backward through
        the blocks above the layer: rcqa.attribution.cost), for a model of `blocks` blocks."""

    def worst_case(self, settings: ExplainSettings) -> ExplainSettings:
        """Settings that cost what these cost at most (rcqa.attribution.cost.worst_case); a method that spends a
        fixed amount costs what it is expected to."""
        return settings

    def answer_pass(self, settings: ExplainSettings) -> RunWindows | None:
        """How the windows are run to answer the example before its explanation (rcqa.qa.answer_with_logits's
        `run`): None for the model's own forward; a method whose pass computes the logits anyway answers from it,
        so the runner's questions are not run twice."""
        return None

    def forget_answer_pass(self, qa_model: QAModel) -> None:
        """Drop what answer_pass kept for the explanation, which will not follow (it was refused after answering)."""

    @abstractmethod
    def explain_layers(self, qa_model: QAModel, example: Example, settings: ExplainSettings,
                       explained: ExplainedTargets, on_layer: OnLayer | None) -> ExplainedLayers:
        """Every layer of the explained targets; on_layer hears each as it is done."""

    def batch_answers(self, qa_model: QAModel, windows: Sequence[Windows]) -> list[RunWindows | None]:
        """How each of several examples' windows are run to answer them (None: the model's forward) where they are
        explained as one batch (rcqa.attribution.explanation.explain_each); a method that batches overrides it."""
        raise NotImplementedError(f"{self.label} explains one example at a time")

    def explain_batch(self, qa_model: QAModel, examples: Sequence[Example],
                      explained: Sequence[ExplainedTargets]) -> list[ExplainedLayers]:
        """Every layer of several examples' targets from passes they share; a method that batches overrides it."""
        raise NotImplementedError(f"{self.label} explains one example at a time")

    def embeddings_layer(self, qa_model: QAModel, example: Example, settings: ExplainSettings,
                         explained: ExplainedTargets, stack: LayerStack) -> LayerResult:
        """The scores at the embeddings' output alone (the layer the methods page compares), for one window whose
        layer outputs `stack` holds: by default every layer's explanation's first; a method that can compute that
        layer alone does so."""
        return self.explain_layers(qa_model, example, settings, explained, None).layers[0]

    def embeddings_passes(self, settings: ExplainSettings) -> float:
        """What embeddings_layer costs, in passes through every block (a forward and a backward): its path points
        at the embeddings, each of which runs every block once."""
        return self.path_points(settings, blocks=1)


def layerwise_method(name: str) -> LayerwiseMethod:
    """The registered method called `name`; ValueError, naming them, for any other."""
    if name not in LAYERWISE_METHODS:
        raise ValueError(f"unknown method {str(name)[:40]!r}; choose one of {', '.join(LAYERWISE_METHODS)}")
    return LAYERWISE_METHODS[name]


def method_of(settings: ExplainSettings) -> LayerwiseMethod:
    """The method the settings name, having checked that it can explain with them (ValueError otherwise): the one
    place a method's limits are decided, asked by resolve and again by explain for settings built by hand."""
    method = layerwise_method(settings.method)
    method.check(settings)
    return method


def streamed(layers: list[LayerResult], on_layer: OnLayer | None) -> list[LayerResult]:
    """Layers computed in one go, heard one after another by on_layer."""
    if on_layer is not None:
        for result in layers:
            on_layer(result)
    return layers


__all__ = ["LAYERWISE_METHODS", "ExplainedLayers", "ExplainedTargets", "LayerwiseMethod", "OnLayer", "Tokens",
           "layerwise_method", "method_of", "streamed"]
