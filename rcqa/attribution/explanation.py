"""explain: the one explanation pipeline. Answer the example, find the explained span's window and the targets the
settings ask for there (a contrast first: rcqa.attribution.contrast), attribute every layer over a scope, one window
(rcqa.attribution.engine.WindowScope, prefix-cached) or, with settings.windows "all", the whole passage
(rcqa.attribution.passage.PassageScope), or, with settings.method "attnlrp", every layer of the window in one pass
(rcqa.attribution.lrp), and build the Attribution (here, and nowhere else). Every caller that takes IGSettings from
a user explains through here."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rcqa.attribution.contrast import contrast_target, find_foil
from rcqa.attribution.engine import LayerResult, Scope, WindowScope, iter_layers
from rcqa.attribution.lrp import explain_layers
from rcqa.attribution.passage import PassageScope, WindowProgress
from rcqa.attribution.settings import IGSettings
from rcqa.attribution.targets import Target
from rcqa.attribution.window import ExplainedWindow, explained_window, token_words
from rcqa.model import QAModel
from rcqa.qa import InputError
from rcqa.types import NULL_TARGETS, Attribution, Example, Foil, Windowing, Word, explained_target


@dataclass(frozen=True)
class ExplainedTargets:
    """The window an explanation is taken at and its targets (a contrast first), with the foil it names."""

    window: ExplainedWindow
    targets: list[Target]
    foil: Foil | None


def explained_targets(qa_model: QAModel, example: Example, settings: IGSettings) -> ExplainedTargets:
    """Answer the example, find the explained span's window, and the targets the settings ask for there."""
    refuse_null_targets(qa_model, settings)
    explained = explained_window(qa_model, example, settings.span_spec, settings.allow_null)
    foil = settings.foil and find_foil(settings.foil, explained.logits, example, explained.answer,
                                       explained.windows, explained.span)
    targets = ([contrast_target(foil, *explained.span)] if foil else []) + [
        Target(name, explained.start_token, explained.end_token) for name in settings.targets]
    return ExplainedTargets(explained, targets, foil or None)


def refuse_null_targets(qa_model: QAModel, settings: IGSettings) -> None:
    """A "no answer" target (null, answer_vs_null, a contrast with it) on a model with nowhere to read it: refused
    with the model's sentence (rcqa.model.QAModel.null_refusal)."""
    null_foil = settings.foil is not None and settings.foil.kind == "null"
    if (set(settings.targets) & set(NULL_TARGETS) or null_foil) and qa_model.null_refusal:
        raise InputError(qa_model.null_refusal)


def explain(qa_model: QAModel, example: Example, settings: IGSettings = IGSettings(),
            on_layer: Callable[[LayerResult | WindowProgress], None] | None = None) -> Attribution:
    """Answer the example, then attribute the chosen targets at every layer: of the answer's window, or, with
    settings.windows == "all", of every window of the passage at once; by AttnLRP where settings.method says so.
    on_layer hears each layer as it is done (and, over the whole passage, each window's progress)."""
    started = time.perf_counter()
    explained = explained_targets(qa_model, example, settings)
    window = explained.window
    if settings.method == "attnlrp":
        layers, hidden_states = explain_layers(qa_model, window.inputs, explained.targets, started)
        if on_layer:
            for result in layers:
                on_layer(result)
        return _attribution(qa_model, example, settings, explained, _window_tokens(example, explained),
                            layers, hidden_states, None, started)
    scope: Scope
    if settings.windows == "all":
        scope = passage = PassageScope.of(qa_model, window, explained.targets, explained.foil, settings.baseline,
                                          on_layer)
        tokens = _passage_tokens(example, explained, passage)
    else:
        scope = WindowScope.of(qa_model, window.inputs, explained.targets, settings.baseline)
        tokens = _window_tokens(example, explained)
    layers = []
    for result in iter_layers(scope, settings):
        layers.append(result)
        if on_layer:
            on_layer(result)
    return _attribution(qa_model, example, settings, explained, tokens, layers, *scope.kept_states(), started)


@dataclass(frozen=True)
class _Tokens:
    """What a result records of the tokens it explains: one window's, or the whole passage's."""

    ids: Sequence[int]
    offsets: Sequence[tuple[int, int]]
    segments: Sequence[str]
    words: list[Word]
    targets: list[Target]  # the explained targets, placed among these tokens
    null_window: int | None  # the whole passage: the window "no answer" is read in (None for one window)
    windows: tuple[int, tuple[int, ...]] | None  # the whole passage: how many windows, and those read


def _window_tokens(example: Example, explained: ExplainedTargets) -> _Tokens:
    window = explained.window
    return _Tokens(window.inputs["input_ids"][0].tolist(), window.offsets, window.segments,
                   window.words(example.passage), explained.targets, None, None)


def _passage_tokens(example: Example, explained: ExplainedTargets, scope: PassageScope) -> _Tokens:
    layout = scope.layout
    return _Tokens(layout.ids, layout.offsets, layout.segments,
                   token_words(layout.offsets, layout.segments, example.question, example.passage),
                   scope.placed(explained.targets, explained.foil, lambda w, t: layout.positions[w][t]),
                   scope.null_window, (len(scope.stacks), tuple(scope.read)))


def _attribution(qa_model: QAModel, example: Example, settings: IGSettings, explained: ExplainedTargets,
                 tokens: _Tokens, layers: list[LayerResult], hidden_states: np.ndarray,
                 hidden_tokens: list[int] | None, started: float) -> Attribution:
    """The result: scores (targets × aggregations × layers × tokens), the targets as explained, the settings."""
    window = explained.window
    span = window.span_text(example.passage)
    return Attribution(
        example=example, model=qa_model.name, fingerprint=qa_model.fingerprint, answer=window.answer,
        window=window.window, tokens=qa_model.tokenizer.convert_ids_to_tokens(list(tokens.ids)),
        token_offsets=list(tokens.offsets), token_segments=list(tokens.segments), words=tokens.words,
        layers=[r.label for r in layers],
        targets=[explained_target(t, span, window.window, explained.foil, tokens.null_window)
                 for t in tokens.targets],
        scores=np.stack([r.scores for r in layers], axis=2),
        completeness=[c for r in layers for c in r.completeness],
        settings=settings, windowing=Windowing(qa_model.max_len, qa_model.doc_stride, *(tokens.windows or ())),
        seconds=time.perf_counter() - started, hidden_states=hidden_states, hidden_tokens=hidden_tokens,
    )
