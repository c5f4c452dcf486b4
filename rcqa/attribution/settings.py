"""The named presets a user reproduces with one word, and resolve, the one way from a user's choices to ExplainSettings.
The settings themselves (ExplainSettings, the baselines, spans, foils and windows it may name, SpanSpec and FoilSpec) are part of every result, so they live with the results in rcqa.types.settings; they are imported from
here too, where the engine's callers have always found them."""
from __future__ import annotations

from dataclasses import dataclass, replace

from rcqa.attribution.layerwise import method_of
from rcqa.types import Aggregation
from rcqa.types.settings import (
    BASELINES,
    FOILS,
    MAX_FOIL_TEXT,
    SPANS,
    WINDOWS,
    FoilSpec,
    ExplainSettings,
    SpanSpec,
)

__all__ = ["BASELINES", "FOILS", "MAX_FOIL_TEXT", "PRESETS", "SPANS", "WINDOWS", "FoilSpec", "ExplainSettings", "Preset",
           "SpanSpec", "resolve"]


@dataclass(frozen=True)
class Preset:
    description: str
    settings: ExplainSettings
    aggregation: Aggregation  # the token score the analyses use (rcqa.types.AGGREGATIONS)


PRESETS = {
    "default": Preset("rcqa's defaults: log p(start) + log p(end) of the span, [PAD] baseline, adaptive "
                      "Gauss–Legendre to 1 % completeness, L2 token score", ExplainSettings(), "l2"),
    "paper-code": Preset("the paper's released code: zero baseline, 20 points k/20 with the trapezoid rule, "
                         "F = max softmax(start) + max softmax(end), L2 token score", ExplainSettings.paper(), "l2"),
    "paper-text": Preset("the paper's text: zero baseline, 50 right-Riemann steps, its F, squared L2 token score",
                         ExplainSettings.paper_text(), "l2_squared"),
}


def resolve(preset: str = "default", **overrides) -> ExplainSettings:
    """The one way from a user's choices to ExplainSettings: the preset's (PRESETS) with each override, a field of
    ExplainSettings as its to_dict writes it, in its place; a method with targets of its own
    (rcqa.attribution.layerwise.LayerwiseMethod.default_targets) explains them where none were asked for, under a
    preset whose targets are the defaults. ValueError, in one sentence, for an unknown preset or setting, a bad value
    (a span or foil is parsed here, once) or settings the method cannot explain with."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {str(preset)[:40]!r}; choose one of {', '.join(PRESETS)}")
    chosen = PRESETS[preset].settings.changed(**overrides)
    method = method_of(chosen)
    if (method.default_targets and "targets" not in overrides
            and PRESETS[preset].settings.targets == ExplainSettings().targets):
        return replace(chosen, targets=method.default_targets)
    return chosen
