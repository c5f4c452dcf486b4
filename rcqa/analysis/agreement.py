"""How far two explanations of one question agree, layer by layer (AttnLRP's layer roles against IG's): the rank
correlation of their passage-word scores and the overlap of their top-k words. Registered as the `agreement`
analysis, computed on request (`analyze agreement`, `reproduce --agreement`, a button on Compare layers)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from rcqa.analysis.registry import Analysis, Inputs
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


@dataclass(frozen=True)
class MethodAgreement:
    """The agreement analysis: Integrated Gradients' explanation against AttnLRP's, per layer (first IG, then AttnLRP,
    whichever of the two the question was explained with first)."""

    methods: tuple[str, str]
    aggregation: str
    k: int
    layers: list[LayerAgreement]

    def to_dict(self) -> dict:
        return {"methods": list(self.methods), "aggregation": self.aggregation, "k": self.k,
                "layers": [{"layer": row.layer, "spearman": None if math.isnan(row.spearman) else row.spearman,
                            "top_k_overlap": row.top_k_overlap} for row in self.layers]}

    @classmethod
    def from_dict(cls, document: dict) -> MethodAgreement:
        return cls(tuple(document["methods"]), document["aggregation"], document["k"],
                   [LayerAgreement(row["layer"], math.nan if row["spearman"] is None else row["spearman"],
                                   row["top_k_overlap"]) for row in document["layers"]])

    def row(self) -> dict:
        return {"agreement": json.dumps(self.to_dict())}


_IG_FIRST = ("integrated_gradients", "attnlrp")


def method_agreement(inputs: Inputs) -> MethodAgreement:
    """IG's and AttnLRP's explanations of the question compared per layer (layer_agreement)."""
    pair = ((inputs.result, inputs.companion) if inputs.method == _IG_FIRST[0] else
            (inputs.companion, inputs.result))
    return MethodAgreement(_IG_FIRST, inputs.aggregation, inputs.k,
                           layer_agreement(*pair, inputs.aggregation, inputs.k))


AGREEMENT = Analysis(
    "agreement", "Integrated Gradients and AttnLRP on this question",
    "how far AttnLRP's word ranking agrees with Integrated Gradients' at each layer: Spearman's rank correlation over "
    "the passage words and the share of top-k words in common (AttnLRP explains the question too)",
    method_agreement, MethodAgreement, {"agreement": "json"}, optional=True,
    companion=dict(zip(_IG_FIRST, reversed(_IG_FIRST))))
