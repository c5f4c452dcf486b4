"""explain: one window (rcqa.attribution.engine) or the whole passage (rcqa.attribution.passage), as the settings'
windows say, or with settings.method 'attnlrp', one window by AttnLRP (rcqa.attribution.lrp). Every caller that
takes IGSettings from a user explains through here."""
from __future__ import annotations

from collections.abc import Callable

from rcqa.attribution import engine, lrp, passage
from rcqa.attribution.settings import IGSettings
from rcqa.model import QAModel
from rcqa.types import Attribution, Example


def explain(qa_model: QAModel, example: Example, settings: IGSettings = IGSettings(),
            on_layer: Callable[[engine.LayerResult | passage.WindowProgress], None] | None = None) -> Attribution:
    """Answer the example, then attribute the chosen targets at every layer: of the answer's window, or, with
    settings.windows == "all", of every window of the passage at once; by AttnLRP where settings.method says so."""
    if settings.method == "attnlrp":
        return lrp.explain(qa_model, example, settings, on_layer)
    if settings.windows == "all":
        return passage.explain_passage(qa_model, example, settings, on_layer)
    return engine.explain(qa_model, example, settings, on_layer)
