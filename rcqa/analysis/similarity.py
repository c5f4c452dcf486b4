"""How alike two layers' attributions are: Jensen–Shannon divergence of their word distributions."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rcqa.analysis.registry import Analysis, Inputs, json_list
from rcqa.analysis.words import is_empty, top_k

VARIANTS = {"full": "whole distributions", "topk_removed": "each layer's top-k words removed",
            "topk_kept": "only each layer's top-k words kept"}


def describe(variant: str, k: int) -> str:
    """The variant in words, with k in place: 'each layer's top-5 words removed'."""
    return VARIANTS[variant].replace("top-k", f"top-{k}")


def jensen_shannon(p: np.ndarray, q: np.ndarray) -> float:
    """JSD in bits (base 2), in [0, 1]; NaN when either is no distribution (all zeros): undefined, not 0.5."""
    if not (p > 0).any() or not (q > 0).any():
        return float("nan")
    m = (p + q) / 2

    def kl(a: np.ndarray) -> float:
        nonzero = a > 0
        return float(np.sum(a[nonzero] * np.log2(a[nonzero] / m[nonzero])))
    return max(0.0, (kl(p) + kl(q)) / 2)


def restrict(distribution: np.ndarray, variant: str, k: int) -> np.ndarray:
    """Each layer's distribution with its own top-k words removed or kept, renormalised. A layer left with no
    attribution (all its words were in its top-k) becomes an all-zero row: no distribution."""
    if variant == "full":
        return distribution
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    in_top = np.zeros_like(distribution, dtype=bool)
    for layer, top in enumerate(top_k(distribution, k)):
        in_top[layer, top] = True
    kept = np.where(in_top if variant == "topk_kept" else ~in_top, distribution, 0.0)
    totals = kept.sum(axis=1, keepdims=True)
    return np.divide(kept, totals, out=np.zeros_like(kept), where=totals > 0)


def jsd_matrix(distribution: np.ndarray, variant: str = "full", k: int = 5) -> np.ndarray:
    """(layers × layers) JSD between every pair of layers' passage-word distributions; NaN where a layer has
    no distribution (its row and column, the diagonal included)."""
    restricted = restrict(distribution, variant, k)
    layers = restricted.shape[0]
    matrix = np.zeros((layers, layers))
    empty = is_empty(restricted)
    matrix[empty] = matrix[:, empty] = np.nan
    for i in range(layers):
        for j in range(i + 1, layers):
            matrix[i, j] = matrix[j, i] = jensen_shannon(restricted[i], restricted[j])
    return matrix


@dataclass(frozen=True)
class LayerSimilarity:
    """The layers' names and, per variant computed (of VARIANTS), the (layers × layers) JSD matrix (None where
    undefined)."""

    layers: list[str]
    k: int
    jsd: dict[str, list]

    def to_dict(self) -> dict:
        return {"layers": self.layers, "k": self.k, "jsd": self.jsd}

    @classmethod
    def from_dict(cls, document: dict) -> LayerSimilarity:
        return cls(document["layers"], document["k"], document["jsd"])

    def row(self) -> dict:
        return {f"jsd_{variant}": self.jsd.get(variant) for variant in VARIANTS}

    def matrix(self, variant: str) -> np.ndarray:
        """One variant's matrix as numbers, NaN where undefined."""
        return np.array(self.jsd[variant], dtype=float)


def layer_similarity(inputs: Inputs, variants: tuple[str, ...] = tuple(VARIANTS)) -> LayerSimilarity:
    """The JSD matrices of `variants` (default: all; a row leaves the others null)."""
    return LayerSimilarity(inputs.result.layers, inputs.k,
                           {variant: json_list(jsd_matrix(inputs.distribution, variant, inputs.k), 6)
                            for variant in variants})


SIMILARITY = Analysis("similarity", "How alike are the layers?", "the Jensen–Shannon divergence between every two layers' word distributions "
                      f"({', '.join(VARIANTS.values())})", layer_similarity, LayerSimilarity,
                      {f"jsd_{variant}": "matrix" for variant in VARIANTS})
