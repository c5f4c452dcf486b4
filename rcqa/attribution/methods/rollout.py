"""Attention rollout (Abnar & Zuidema, 2020): attention mixed with the residual connection, multiplied through
the layers."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from rcqa.attribution.methods.attention import roll_down
from rcqa.attribution.methods.base import AttributionMethod, Case


def rollout_mixings(attentions: np.ndarray) -> np.ndarray:
    """Per layer, 0.5·I + 0.5·A with A the heads' mean attention, each row normalised to sum 1: the residual
    connection carries half of every token's state past the attention."""
    mixed = 0.5 * np.eye(attentions.shape[-1]) + 0.5 * attentions.mean(axis=1)
    return mixed / mixed.sum(axis=-1, keepdims=True)


def rollout_scores(attentions: np.ndarray, positions: Iterable[int]) -> np.ndarray:
    """The rows of the rolled-out attention Ã_L ··· Ã_1 at positions, summed."""
    return roll_down(rollout_mixings(attentions), positions)


class AttentionRollout(AttributionMethod):
    name = "attention_rollout"
    colour = "#ff7f0e"
    label = "Attention rollout"
    description = ("attention rollout (Abnar & Zuidema): 0.5·I + 0.5·(the heads' mean attention), rows "
                   "normalised, multiplied through the layers; the rows of the span's start and end tokens")
    passes = 1 / 3  # one forward that records the attention maps
    shared_pass = "attentions"

    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        return {"magnitude": rollout_scores(case.attentions, case.target_positions)}  # attention mass: never < 0
