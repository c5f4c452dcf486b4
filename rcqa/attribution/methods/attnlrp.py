"""AttnLRP at the embeddings' output (rcqa.attribution.lrp), from the same pass that gives every layer."""
from __future__ import annotations

import numpy as np

from rcqa.attribution.layerwise import AttnLRP as LayerwiseAttnLRP
from rcqa.attribution.lrp import layer_relevance
from rcqa.attribution.methods.base import AttributionMethod, Case, signed_and_magnitude


class AttnLRP(AttributionMethod):
    name = LayerwiseAttnLRP.name
    label = "AttnLRP"
    colour = LayerwiseAttnLRP.colour  # one method, one colour, whether at every layer or at the embeddings
    description = ("AttnLRP (Achtibat et al., 2024) at the embeddings' output: each token's relevance over the "
                   "hidden dims (signed: positive supports the target)")
    rankings = ("signed", "magnitude")
    ranking_before_both = "signed"

    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        found = layer_relevance(case.qa_model.model, case.device_inputs, [case.target])
        return signed_and_magnitude(found.relevance[0, 0])
