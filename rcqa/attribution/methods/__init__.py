"""The attribution methods the methods page compares (rcqa.faithfulness), all with one interface
(base.AttributionMethod): each scores the tokens of the same explained input for the same target, so that their
faithfulness can be compared. METHODS is the one registry of them: every layer-wise method registered in
rcqa.attribution.layerwise, at its embeddings' output (layer_embeddings: no second class), and the methods that
are only token-level, one per file, each listed below (its registry line)."""
from __future__ import annotations

from rcqa.attribution.layerwise import LAYERWISE_METHODS
from rcqa.types.settings import ExplainSettings
from rcqa.attribution.methods.base import (
    RANKINGS,
    AttributionMethod,
    Case,
    normalised,
    word_scores,
)
from rcqa.attribution.methods.gradient import GradientSensitivity
from rcqa.attribution.methods.gradient_input import GradientTimesInput
from rcqa.attribution.methods.layer_embeddings import LayerEmbeddings
from rcqa.attribution.methods.random_baseline import RandomBaseline
from rcqa.attribution.methods.rollout import AttentionRollout
from rcqa.attribution.methods.tracing import AttentionTracing

METHODS: dict[str, AttributionMethod] = {method.name: method for method in (
    GradientSensitivity(), GradientTimesInput(), *map(LayerEmbeddings, LAYERWISE_METHODS.values()),
    AttentionTracing(), AttentionRollout(), RandomBaseline())}
RANDOM = RandomBaseline.name  # the method the others are compared with
OFFERED = tuple(name for name in METHODS if name != RANDOM)  # what a comparison may be asked to compare with random
COMPARED = tuple(name for name in OFFERED if METHODS[name].compared)  # what it compares by default


def make_method(name: str, settings: ExplainSettings | None = None, seed: int = 0) -> AttributionMethod:
    """The method called name, as it runs with the explanation's settings (a layer-wise method reads them) and a
    random draw's seed (random reads it)."""
    if name not in METHODS:
        raise ValueError(f"unknown method {str(name)[:40]!r}; choose from {', '.join(METHODS)}")
    return METHODS[name].made(settings or ExplainSettings(), seed)


__all__ = ["COMPARED", "METHODS", "OFFERED", "RANDOM", "RANKINGS", "AttributionMethod", "Case", "make_method",
           "normalised", "word_scores"]
