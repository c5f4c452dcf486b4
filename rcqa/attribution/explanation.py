"""explain: the one explanation pipeline. Answer the example, find the explained span's window and the targets the
settings ask for there (a contrast first: rcqa.attribution.contrast), have the method the settings name
(rcqa.attribution.layerwise) explain every layer, and build the Attribution (here, and nowhere else). Every caller
that takes ExplainSettings from a user explains through here."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import TypeVar

import numpy as np

from rcqa.attribution.contrast import contrast_target, find_foil
from rcqa.attribution.engine import LayerResult
from rcqa.attribution.layerwise import ExplainedLayers, ExplainedTargets, method_of
from rcqa.attribution.passage import WindowProgress
from rcqa.attribution.targets import Target, TargetError
from rcqa.attribution.window import explained_window
from rcqa.model import QAModel
from rcqa.qa import InputError, Reading, RunWindows, encode
from rcqa.types import NULL_TARGETS, Attribution, Example, Windowing, explained_target
from rcqa.types.method_settings import MethodSettings
from rcqa.types.settings import ExplainSettings

T = TypeVar("T")


def explained_targets(qa_model: QAModel, example: Example, settings: ExplainSettings,
                      reading: Reading | None = None, run: RunWindows | None = None) -> ExplainedTargets:
    """Answer the example (or take the answer `reading` holds, where it fits: rcqa.attribution.window.handed_answer;
    `run`: how the windows are run to answer it, by default the model's forward), find the explained span's window,
    and the targets the settings ask for there."""
    refuse_null_targets(qa_model, settings)
    explained = explained_window(qa_model, example, settings.span, settings.allow_null, reading, run)
    foil = settings.contrast and find_foil(settings.contrast, explained.logits, example, explained.answer,
                                           explained.windows, explained.span)
    targets = ([contrast_target(foil, *explained.span)] if foil else []) + [
        Target(name, explained.start_token, explained.end_token) for name in settings.targets]
    return ExplainedTargets(explained, targets, foil or None)


def refuse_null_targets(qa_model: QAModel, settings: ExplainSettings) -> None:
    """A "no answer" target (null, answer_vs_null, a contrast with it) on a model with nowhere to read it: refused
    with the model's sentence (rcqa.model.QAModel.null_refusal)."""
    null_foil = settings.contrast is not None and settings.contrast.kind == "null"
    if (set(settings.targets) & set(NULL_TARGETS) or null_foil) and qa_model.null_refusal:
        raise TargetError(qa_model.null_refusal)


def explain(qa_model: QAModel, example: Example, settings: ExplainSettings = ExplainSettings(),
            on_layer: Callable[[LayerResult | WindowProgress], None] | None = None,
            reading: Reading | None = None) -> Attribution:
    """Answer the example, then attribute the chosen targets at every layer by the method the settings name: of the
    answer's window, or, with settings.windows == "all", of every window of the passage at once. on_layer hears
    each layer as it is done (and, over the whole passage, each window's progress). `reading`: the example's answer
    read already (a page's, rcqa.qa.read), used instead of answering again where it fits."""
    started = time.perf_counter()
    method = method_of(settings)
    if (refused := method.model_refusal(qa_model)) is not None:
        raise TargetError(refused)
    try:
        explained = explained_targets(qa_model, example, settings, reading, method.answer_pass(settings))
    except BaseException:  # refused after answering: nothing kept for an explanation that will not follow
        method.forget_answer_pass(qa_model)
        raise
    return _attribution(qa_model, example, settings, method.used_settings(settings), explained,
                        method.explain_layers(qa_model, example, settings, explained, on_layer), started)



def explain_each(qa_model: QAModel, examples: Sequence[Example],
                 settings: ExplainSettings = ExplainSettings()) -> list[Attribution | Exception]:
    """explain for each example, in their order, each failure (an example the model cannot read, a target not there)
    in its place as its exception. A method that batches (LayerwiseMethod.batches) answers and explains them from
    passes they share, each result with its share of the time; where the batch itself fails, each is explained
    alone. Any other method explains one after another."""
    method = method_of(settings)
    if not method.batches or method.model_refusal(qa_model) is not None or len(examples) < 2:
        return [_caught(partial(explain, qa_model, example, settings)) for example in examples]
    started = time.perf_counter()
    try:
        windows = [encode(qa_model, example.question, example.passage) for example in examples]
        runs = method.batch_answers(qa_model, windows)
        explained = [_caught(partial(explained_targets, qa_model, example, settings, None, run))
                     for example, run in zip(examples, runs)]
        ready = {i: one for i, one in enumerate(explained) if isinstance(one, ExplainedTargets)}
        found = method.explain_batch(qa_model, [examples[i] for i in ready], list(ready.values())) if ready else []
    except Exception:  # the batch as a whole (an example too long to encode, memory): each alone, as ever
        method.forget_answer_pass(qa_model)
        return [_caught(partial(explain, qa_model, example, settings)) for example in examples]
    method.forget_answer_pass(qa_model)  # where none was explained, or the explanation ran a forward of its own
    share = (time.perf_counter() - started) / len(examples)
    layers = dict(zip(ready, found))  # by example
    return [one if isinstance(one, Exception) else
            replace(_attribution(qa_model, examples[i], settings, method.used_settings(settings), one, layers[i],
                                 started), seconds=share)
            for i, one in enumerate(explained)]


def _caught(work: Callable[[], T]) -> T | Exception:
    """What work returns, or the exception it raised (an Exception: never an interrupt)."""
    try:
        return work()
    except Exception as error:
        return error


def _attribution(qa_model: QAModel, example: Example, settings: ExplainSettings, used: MethodSettings,
                 explained: ExplainedTargets, found: ExplainedLayers, started: float) -> Attribution:
    """The result: scores (targets × aggregations × layers × tokens), the targets as explained, the settings."""
    window, tokens, layers = explained.window, found.tokens, found.layers
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
        seconds=time.perf_counter() - started, hidden_states=found.hidden_states, hidden_tokens=found.hidden_tokens,
        method_settings=used,
    )
