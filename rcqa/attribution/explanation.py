"""explain: one window (rcqa.attribution.engine) or the whole passage (rcqa.attribution.passage), as the settings'
windows say. Every caller that takes IGSettings from a user explains through here."""
from __future__ import annotations

from collections.abc import Callable

from rcqa.attribution import engine, passage
from rcqa.attribution.settings import IGSettings
from rcqa.model import QAModel
from rcqa.types import Attribution, Example


def explain(qa_model: QAModel, example: Example, settings: IGSettings = IGSettings(),
            on_layer: Callable[[engine.LayerResult | passage.WindowProgress], None] | None = None) -> Attribution:
    """Answer the example, then attribute the chosen targets at every layer: of the answer's window, or, with
    settings.windows == "all", of every window of the passage at once."""
    if settings.windows == "all":
        return passage.explain_passage(qa_model, example, settings, on_layer)
    return engine.explain(qa_model, example, settings, on_layer)
