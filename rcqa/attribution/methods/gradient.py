"""Gradient sensitivity (Wu & Ong): how fast F changes with each token's embedding."""
from __future__ import annotations

import numpy as np

from rcqa.attribution.methods.base import AttributionMethod, Case


class GradientSensitivity(AttributionMethod):
    name = "gradient"
    colour = "#1f77b4"
    label = "Gradient sensitivity"
    description = "gradient sensitivity: squared L2 norm of ∂F/∂E at the embeddings' output (Wu & Ong)"
    shared_pass = "embedding_gradient"

    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        # a gradient has no sign of its own per token (summed over dims it says nothing): magnitude only
        _, gradient = case.embedding_gradient
        return {"magnitude": (gradient.double() ** 2).sum(-1).cpu().numpy()}
