"""Integrated Gradients at the embeddings' output, computed by rcqa's engine (its layer 0)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from rcqa.attribution.engine import WindowScope, iter_layers
from rcqa.attribution.methods.base import AttributionMethod, Case
from rcqa.attribution.settings import IGSettings
from rcqa.types import AGGREGATIONS


class IntegratedGradients(AttributionMethod):
    name = "integrated_gradients"
    aggregation = "l2_squared"  # as for the two gradient methods; it ranks tokens as the L2 norm Explore shows does
    description = ("Integrated Gradients at the embeddings' output with rcqa's engine (its baseline and rule, "
                   "checked for completeness): squared L2 norm of each token's attribution")

    def __init__(self, settings: IGSettings | None = None):
        self.settings = settings or IGSettings()

    def attribute(self, case: Case) -> np.ndarray:
        # the case fixes the target and its span; the settings give the baseline and the integration rule
        settings = replace(self.settings, targets=(case.target.name,))
        scope = WindowScope.of(case.qa_model, case.window.inputs, [case.target], settings.baseline, case.stack)
        (embeddings,) = iter_layers(scope, settings, layers=[0])
        return embeddings.scores[0, AGGREGATIONS.index(self.aggregation)]
