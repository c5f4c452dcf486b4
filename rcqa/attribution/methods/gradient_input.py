"""Gradient × input (Wu & Ong): the gradient weighted by the embedding it is taken at."""
from __future__ import annotations

import numpy as np

from rcqa.attribution.methods.base import AttributionMethod, Case


class GradientTimesInput(AttributionMethod):
    name = "gradient_x_input"
    description = "gradient × input: squared L2 norm of ∂F/∂E ⊙ E at the embeddings' output (Wu & Ong)"

    def attribute(self, case: Case) -> np.ndarray:
        embeddings, gradient = case.embedding_gradient
        return ((gradient.double() * embeddings.double()) ** 2).sum(-1).cpu().numpy()
