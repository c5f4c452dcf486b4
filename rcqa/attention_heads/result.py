"""The heads of one question scored, as one result that saves, loads and shows itself: every head's knock-out (the
ground truth of necessity) beside the scores that try to predict it, and how well each does, layer by layer."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from rcqa.attention_heads.registry import head_score
from rcqa.attention_heads.scores import HeadKnockouts
from rcqa.types import ResultHeader


@dataclass(repr=False)
class HeadScores(ResultHeader):
    """Every attention head of every layer of one window: its knock-out and its scores (method → layers × heads)."""

    layers: list[str]  # the labels of the layers whose heads are scored ("block 0", ...)
    heads: int
    explained_span: str
    fill: str  # what replaced a knocked-out head (rcqa.attention_heads.FILLS)
    knockout: HeadKnockouts
    scores: dict[str, np.ndarray]
    conservation: dict[str, list[float]]  # per layer: AttnLRP's entering relevance, absorbed share, gap (relevance.py)
    completeness: dict[str, list[float]]  # per layer: attention attribution's F(A) − F(0), Σ attribution, gap

    kind = "heads"

    def agreement(self) -> dict[str, list[float | None]]:
        """Per score, per layer: Spearman's ρ over the layer's heads between the score and what of the knock-outs it
        predicts (its knockout_effect: a signed score against the drop in F, −Δ, so that a head the score says helps
        the span is one whose loss lowers it; a magnitude against |Δ|; a predicted change against Δ), None where
        either is constant."""
        delta = self.knockout.delta_log_likelihood
        return {name: [_rho(score[layer], head_score(name).knockout_effect(delta[layer]))
                       for layer in range(len(self.layers))] for name, score in self.scores.items()}

    def to_dict(self) -> dict:
        return {**self.header_dict(), "layers": self.layers, "heads": self.heads,
                "explained_span": self.explained_span, "fill": self.fill,
                "unchanged_log_prob": self.knockout.unchanged,
                "scores": {name: score.tolist() for name, score in self.scores.items()},
                "knockout": {"delta_log_prob": self.knockout.delta_log_likelihood.tolist(),
                             "flips": self.knockout.flips.tolist(),
                             "answers": [list(row) for row in self.knockout.answers]},
                "conservation": self.conservation, "completeness": self.completeness, "agreement": self.agreement()}

    @classmethod
    def from_dict(cls, data: dict) -> HeadScores:
        knockout = data["knockout"]
        return cls(**cls.header_fields(data), layers=data["layers"], heads=data["heads"],
                   explained_span=data["explained_span"], fill=data["fill"],
                   knockout=HeadKnockouts(data["unchanged_log_prob"], np.array(knockout["delta_log_prob"]),
                                          np.array(knockout["flips"], dtype=bool),
                                          tuple(tuple(row) for row in knockout["answers"])),
                   scores={name: np.array(score) for name, score in data["scores"].items()},
                   conservation=data["conservation"], completeness=data["completeness"])


def _rho(score: np.ndarray, effect: np.ndarray) -> float | None:
    if np.ptp(score) == 0 or np.ptp(effect) == 0:
        return None
    return float(spearmanr(score, effect).statistic)
