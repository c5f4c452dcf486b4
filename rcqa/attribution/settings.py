"""The named presets a user reproduces with one word. The settings themselves (IGSettings, the baselines, foils,
methods and windows it may name) are part of every result, so they live with the results in rcqa.types.settings;
they are imported from here too, where the engine's callers have always found them."""
from __future__ import annotations

from dataclasses import dataclass

from rcqa.types.settings import (
    BASELINES,
    FOILS,
    MAX_FOIL_TEXT,
    METHODS,
    WINDOWS,
    IGSettings,
    parse_foil,
)

__all__ = ["BASELINES", "FOILS", "MAX_FOIL_TEXT", "METHODS", "PRESETS", "WINDOWS", "IGSettings", "Preset", "parse_foil"]


@dataclass(frozen=True)
class Preset:
    description: str
    settings: IGSettings
    aggregation: str  # the token score the analyses use (rcqa.types.AGGREGATIONS)


PRESETS = {
    "default": Preset("rcqa's defaults: log p(start) + log p(end) of the span, [PAD] baseline, adaptive "
                      "Gauss–Legendre to 1 % completeness, L2 token score", IGSettings(), "l2"),
    "paper-code": Preset("the paper's released code: zero baseline, 20 points k/20 with the trapezoid rule, "
                         "F = max softmax(start) + max softmax(end), L2 token score", IGSettings.paper(), "l2"),
    "paper-text": Preset("the paper's text: zero baseline, 50 right-Riemann steps, its F, squared L2 token score",
                         IGSettings.paper_text(), "l2_squared"),
}
