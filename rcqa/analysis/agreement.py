"""How far two explanations of one question agree, layer by layer (AttnLRP's layer roles against IG's): the rank
correlation of their passage-word scores and the overlap of their top-k words."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from rcqa.analysis.words import passage_distribution, top_k
from rcqa.types import Attribution


@dataclass(frozen=True)
class LayerAgreement:
    layer: str
    spearman: float  # Spearman's ρ over the passage words; nan where either layer scores every word alike
    top_k_overlap: float  # the share of the k top words the two explanations have in common


def layer_agreement(first: Attribution, second: Attribution, aggregation: str = "l2",
                    k: int = 5) -> list[LayerAgreement]:
    """Per layer, the agreement of two explanations of the same window (each word's score under `aggregation`)."""
    if first.words != second.words or first.layers != second.layers:
        raise ValueError("the two explanations read different words or layers; explain the same question in the "
                         "same window with both methods")
    ours, theirs = passage_distribution(first, aggregation), passage_distribution(second, aggregation)
    our_top, their_top = top_k(ours, k), top_k(theirs, k)
    return [LayerAgreement(label, _spearman(ours[layer], theirs[layer]),
                           len(set(our_top[layer]) & set(their_top[layer])) / k)
            for layer, label in enumerate(first.layers)]


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)
