"""A layer-wise method (rcqa.attribution.layerwise) as the methods page compares it: its scores at the embeddings'
output, ranked by their sum over the hidden dims (signed: what completeness and conservation hold for) and by their
squared L2 norm (magnitude). Every registered layer-wise method is offered so, with no class of its own."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from rcqa.attribution.engine import LayerResult
from rcqa.attribution.layerwise import ExplainedTargets, LayerwiseMethod
from rcqa.attribution.methods.base import AttributionMethod, Case
from rcqa.types import AGGREGATIONS, Aggregation
from rcqa.types.settings import ExplainSettings

# the engine's aggregations of the two rankings: the sum over dims is what completeness holds for; the squared L2
# norm ranks tokens as the L2 norm Explore shows does
AGGREGATION_OF: dict[str, Aggregation] = {"signed": "sum", "magnitude": "l2_squared"}


def ranked_scores(layer_scores: np.ndarray) -> dict[str, np.ndarray]:
    """Per ranking, the token scores of one target's layer (aggregations × tokens, in the order of AGGREGATIONS)."""
    return {ranking: layer_scores[AGGREGATIONS.index(aggregation)] for ranking, aggregation in AGGREGATION_OF.items()}


class LayerEmbeddings(AttributionMethod):
    """The layer-wise method `layerwise` at the embeddings' output, with the explanation settings it reads."""

    rankings = tuple(AGGREGATION_OF)

    def __init__(self, layerwise: LayerwiseMethod, settings: ExplainSettings | None = None):
        self.layerwise, self.settings = layerwise, settings or ExplainSettings()
        self.name, self.label, self.colour = layerwise.name, layerwise.short_label, layerwise.colour
        self.description = layerwise.embeddings_description
        self.ranking_before_both, self.compared = layerwise.ranking_before_both, layerwise.embeddings_compared

    def made(self, settings: ExplainSettings, seed: int) -> LayerEmbeddings:
        return LayerEmbeddings(self.layerwise, settings)

    def block_passes(self) -> float:
        return self.layerwise.embeddings_passes(self.settings)

    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        # the case fixes the window, the target and its span; the settings give the rest the method reads
        settings = replace(self.settings, targets=(case.target.name,), windows="answer")
        explained = ExplainedTargets(case.window, [case.target], None)
        layer: LayerResult = self.layerwise.embeddings_layer(case.qa_model, case.example, settings, explained,
                                                             case.stack)
        return ranked_scores(layer.scores[0])
