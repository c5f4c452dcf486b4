"""Attention tracing (Wu & Ong): where the attention of the span's tokens comes from, layer by layer down."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from rcqa.attribution.methods.attention import roll_down
from rcqa.attribution.methods.base import AttributionMethod, Case


def tracing_scores(attentions: np.ndarray, positions: Iterable[int]) -> np.ndarray:
    """attentions (layers × heads × tokens × tokens) summed over heads, rolled down from a one-hot at positions."""
    return roll_down(attentions.sum(axis=1), positions)


class AttentionTracing(AttributionMethod):
    name = "attention_tracing"
    colour = "#9467bd"
    label = "Attention tracing"
    description = ("attention tracing (Wu & Ong): a one-hot at the span's start and end tokens rolled down through "
                   "each layer's attention, summed over heads")
    passes = 1 / 3  # one forward that records the attention maps
    shared_pass = "attentions"

    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        return {"magnitude": tracing_scores(case.attentions, case.target_positions)}  # attention mass: never < 0
