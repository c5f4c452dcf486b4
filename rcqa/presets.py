"""Named settings a user can reproduce with one word: the engine's settings and the token score that reads them."""
from __future__ import annotations

from dataclasses import dataclass

from rcqa.attribution.engine import IGSettings


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
