"""Gradient × input (Wu & Ong): the gradient weighted by the embedding it is taken at."""
from __future__ import annotations

import numpy as np

from rcqa.attribution.methods.base import AttributionMethod, Case, signed_and_magnitude


class GradientTimesInput(AttributionMethod):
    name = "gradient_x_input"
    colour = "#17becf"
    label = "Gradient × input"
    description = "gradient × input: ∂F/∂E ⊙ E at the embeddings' output, over the hidden dims (Wu & Ong)"
    rankings = ("signed", "magnitude")
    shared_pass = "embedding_gradient"

    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        embeddings, gradient = case.embedding_gradient
        return signed_and_magnitude(gradient * embeddings)
