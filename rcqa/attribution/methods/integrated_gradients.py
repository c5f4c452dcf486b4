"""Integrated Gradients at the embeddings' output, computed by rcqa's engine (its layer 0)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from rcqa.attribution.engine import WindowScope, iter_layers
from rcqa.attribution.layerwise import IntegratedGradients as LayerwiseIG
from rcqa.attribution.layerwise.integrated_gradients import expected_points
from rcqa.attribution.methods.base import AttributionMethod, Case
from rcqa.types.settings import ExplainSettings
from rcqa.types import AGGREGATIONS, Aggregation


class IntegratedGradients(AttributionMethod):
    name = LayerwiseIG.name
    label = "Integrated Gradients"
    colour = LayerwiseIG.colour  # one method, one colour, whether at every layer or at the embeddings
    # the engine's aggregations of the two rankings: the sum over dims is what completeness holds for; the squared
    # L2 norm ranks tokens as the L2 norm Explore shows does
    aggregations: dict[str, Aggregation] = {"signed": "sum", "magnitude": "l2_squared"}
    rankings = tuple(aggregations)
    description = ("Integrated Gradients at the embeddings' output with rcqa's engine (its baseline and rule, "
                   "checked for completeness), over the hidden dims")

    def __init__(self, settings: ExplainSettings | None = None):
        self.settings = settings or ExplainSettings()

    def block_passes(self) -> float:
        return expected_points(self.settings)  # its path points, each a pass through the blocks above the embeddings

    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        # the case fixes the target and its span; the settings give the baseline and the integration rule
        settings = replace(self.settings, targets=(case.target.name,))
        scope = WindowScope.of(case.qa_model, case.window.inputs, [case.target], settings.baseline, case.stack)
        (embeddings,) = iter_layers(scope, settings, layers=[0])
        return {ranking: embeddings.scores[0, AGGREGATIONS.index(aggregation)]
                for ranking, aggregation in self.aggregations.items()}
