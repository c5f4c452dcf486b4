"""AttnLRP at the embeddings' output (rcqa.attribution.lrp), from the same pass that gives every layer."""
from __future__ import annotations

import numpy as np

from rcqa.attribution.lrp import layer_relevance
from rcqa.attribution.methods.base import AttributionMethod, Case


class AttnLRP(AttributionMethod):
    name = "attnlrp"
    description = ("AttnLRP (Achtibat et al., 2024) at the embeddings' output: each token's signed relevance, "
                   "summed over the hidden dims (positive: it supports the target)")

    def attribute(self, case: Case) -> np.ndarray:
        found = layer_relevance(case.qa_model.model, case.device_inputs, [case.target])
        return found.relevance[0, 0].double().sum(-1).cpu().numpy()
