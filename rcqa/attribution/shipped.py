"""Explanations shipped with the package: the gallery's, explained by the embedded default model with the settings
the dashboard opens on, so that its first screen draws every layer without a click or a wait.

They are a read-only result cache (rcqa.attribution.cache) found by the same key as any result (the model's
fingerprint, the passage, the question and every setting), so a retrained model, an edited passage or any other
setting never finds one. They are stored compact and without their layer outputs (1-4 MB each, nearly all of a
file), which one forward pass through the window puts back when one is read. `scripts/ship_gallery_explanations.py`
writes them; tests/attribution/test_shipped.py holds each equal to a fresh explanation.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from pathlib import Path

import torch

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.window import explained_window, on_device
from rcqa.model import QAModel
from rcqa.resources import DEFAULT_MODEL_DIR
from rcqa.types import Attribution, Example, ExplainSettings

SHIPPED_DIR = DEFAULT_MODEL_DIR / "explanations"


@functools.cache
def shipped_cache(folder: Path = SHIPPED_DIR) -> ResultCache:
    return ResultCache(folder, read_only=True)


def shipped_result(qa_model: QAModel, example: Example, key: str, folder: Path = SHIPPED_DIR) -> Attribution | None:
    """The shipped explanation kept under `key` (ResultCache.key), as this example's, with its layer outputs put
    back; None where none was shipped for it."""
    found = shipped_cache(folder).result_for(example, key)
    return None if found is None else with_layer_outputs(qa_model, found)


def with_layer_outputs(qa_model: QAModel, result: Attribution) -> Attribution:
    """The result with the layer outputs of its window (the explanation's own states: the engine keeps those of
    the window it explains), from one forward pass; a result that has them, or reads the whole passage, as it is."""
    if result.hidden_states is not None or result.whole_passage:
        return result
    window = explained_window(qa_model, result.example, result.settings.span)
    stack = LayerStack(qa_model.model, on_device(window.inputs, qa_model.device))
    return dataclasses.replace(result, hidden_states=torch.cat(stack.hidden).cpu().numpy(), hidden_tokens=None)


def shipped_path(qa_model: QAModel, example: Example, settings: ExplainSettings, folder: Path = SHIPPED_DIR) -> Path:
    """The file the explanation of `example` with `settings` is shipped in (whether or not it is there)."""
    return shipped_cache(folder).path_of(ResultCache.key(qa_model.fingerprint, example, settings))


def ship(qa_model: QAModel, examples: Iterable[Example], settings: Iterable[ExplainSettings],
         folder: Path = SHIPPED_DIR) -> list[Path]:
    """Explain each example with each of `settings` and keep it in `folder` as shipped_result reads it: compact,
    without layer outputs; one already there is kept (a run stopped half way goes on). The files, in order."""
    cache, chosen_settings = ResultCache(folder, max_mb=float("inf")), tuple(settings)
    written = []
    for example in examples:
        for chosen in chosen_settings:
            key = ResultCache.key(qa_model.fingerprint, example, chosen)
            path = cache.path_of(key)
            if not path.exists():
                cache.put(key, dataclasses.replace(explain(qa_model, example, chosen), hidden_states=None))
            written.append(path)
    return written
