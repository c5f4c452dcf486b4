"""Attribution methods beside layer-wise IG, one per file, all with one interface (base.AttributionMethod): each
scores the tokens of the same explained input for the same target, so that their faithfulness can be compared
(rcqa.faithfulness)."""
from __future__ import annotations

from rcqa.types.settings import ExplainSettings
from rcqa.attribution.methods.base import (
    RANKINGS,
    AttributionMethod,
    Case,
    normalised,
    word_scores,
)
from rcqa.attribution.methods.attnlrp import AttnLRP
from rcqa.attribution.methods.gradient import GradientSensitivity
from rcqa.attribution.methods.gradient_input import GradientTimesInput
from rcqa.attribution.methods.integrated_gradients import IntegratedGradients
from rcqa.attribution.methods.random_baseline import RandomBaseline
from rcqa.attribution.methods.rollout import AttentionRollout
from rcqa.attribution.methods.tracing import AttentionTracing

METHODS: dict[str, type[AttributionMethod]] = {method.name: method for method in (
    GradientSensitivity, GradientTimesInput, IntegratedGradients, AttnLRP, AttentionTracing, AttentionRollout,
    RandomBaseline)}
COMPARED = tuple(name for name in METHODS if name != RandomBaseline.name)  # the methods random is compared with


def make_method(name: str, settings: ExplainSettings | None = None, seed: int = 0) -> AttributionMethod:
    """The method called name; IG takes the engine's settings, random its seed."""
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHODS)}")
    if name == IntegratedGradients.name:
        return IntegratedGradients(settings)
    if name == RandomBaseline.name:
        return RandomBaseline(seed)
    return METHODS[name]()


__all__ = ["COMPARED", "METHODS", "RANKINGS", "AttributionMethod", "Case", "make_method", "normalised", "word_scores"]
