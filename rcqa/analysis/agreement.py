"""How far two explanations of one question agree, layer by layer (one layer-wise method's layer roles against
another's): the rank correlation of their passage-word scores and the overlap of their top-k words, under the chosen
token score and, always, signed against signed (the sum over hidden dims) and L2 against L2. agreement_analysis
makes the analysis of two methods, taken as arguments; rcqa.analysis.registered registers it as the `agreement`
analysis, computed on request (`analyze agreement`, `reproduce --agreement`, a button on Compare layers)."""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from rcqa.analysis.registry import Analysis, Inputs
from rcqa.analysis.words import top_k, word_scores
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution


@dataclass(frozen=True)
class LayerAgreement:
    layer: str
    spearman: float  # Spearman's ρ over the passage words; nan where either layer scores every word alike
    top_k_overlap: float  # the share of the k top words the two explanations have in common


def layer_agreement(first: Attribution, second: Attribution, aggregation: Aggregation = DEFAULT_AGGREGATION,
                    k: int = 5) -> list[LayerAgreement]:
    """Per layer, the agreement of two explanations of the same window (each word's score under `aggregation`:
    under "sum" signed, so that words are ranked by how much they support the target, not by its size alone)."""
    if first.words != second.words or first.layers != second.layers:
        raise ValueError("the two explanations read different words or layers; explain the same question in the "
                         "same window with both methods")
    ours, theirs = (word_scores(result, aggregation)[:, result.passage_indices()] for result in (first, second))
    our_top, their_top = top_k(ours, k), top_k(theirs, k)
    return [LayerAgreement(label, _spearman(ours[layer], theirs[layer]),
                           len(set(our_top[layer]) & set(their_top[layer])) / k)
            for layer, label in enumerate(first.layers)]


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


# the token scores the two methods are always compared by, whatever the chosen one: a signed score against a
# signed one (a relevance's sign says whether a word supports the target) and a magnitude against a magnitude
COMPARED_SCORES: tuple[Aggregation, ...] = ("sum", "l2")


@dataclass(frozen=True)
class MethodAgreement:
    """The agreement analysis: the first method's explanation against the second's, per layer (in the order of
    `methods`, whichever of the two the question was explained with first), under the chosen token score (`layers`)
    and under each of COMPARED_SCORES it is not (`by_score`; empty in documents written before)."""

    methods: tuple[str, str]
    aggregation: Aggregation
    k: int
    layers: list[LayerAgreement]
    by_score: dict[str, list[LayerAgreement]] = field(default_factory=dict)

    def comparisons(self) -> dict[str, list[LayerAgreement]]:
        """Every token score compared, the chosen one first."""
        return {self.aggregation: self.layers, **self.by_score}

    def to_dict(self) -> dict:
        document: dict[str, Any] = {"methods": list(self.methods), "aggregation": self.aggregation, "k": self.k,
                    "layers": _rows_dict(self.layers)}
        if self.by_score:
            document["by_score"] = {score: _rows_dict(rows) for score, rows in self.by_score.items()}
        return document

    @classmethod
    def from_dict(cls, document: dict) -> MethodAgreement:
        return cls(tuple(document["methods"]), document["aggregation"], document["k"], _rows(document["layers"]),
                   {score: _rows(rows) for score, rows in document.get("by_score", {}).items()})

    def row(self) -> dict:
        return {"agreement": json.dumps(self.to_dict())}


def _rows_dict(rows: list[LayerAgreement]) -> list[dict]:
    return [{"layer": row.layer, "spearman": None if math.isnan(row.spearman) else row.spearman,
             "top_k_overlap": row.top_k_overlap} for row in rows]


def _rows(rows: list[dict]) -> list[LayerAgreement]:
    return [LayerAgreement(row["layer"], math.nan if row["spearman"] is None else row["spearman"],
                           row["top_k_overlap"]) for row in rows]


def method_agreement(methods: tuple[str, str], inputs: Inputs) -> MethodAgreement:
    """The two methods' explanations of the question compared per layer (layer_agreement), the first's against the
    second's, under the chosen token score and under each of COMPARED_SCORES."""
    assert inputs.companion is not None  # Analysis.run refuses a two-method analysis without its companion
    explained = {inputs.method: inputs.result, _companions(methods)[inputs.method]: inputs.companion}
    first, second = (explained[method] for method in methods)
    return MethodAgreement(methods, inputs.aggregation, inputs.k,
                           layer_agreement(first, second, inputs.aggregation, inputs.k),
                           {score: layer_agreement(first, second, score, inputs.k) for score in COMPARED_SCORES
                            if score != inputs.aggregation})


def _companions(methods: tuple[str, str]) -> dict[str, str]:
    """Each of the two methods' companion: the other."""
    return dict(zip(methods, reversed(methods)))


def agreement_analysis(first: tuple[str, str], second: tuple[str, str]) -> Analysis:
    """The `agreement` analysis of two layer-wise methods, each (name, label): the first's explanation against the
    second's, the question explained with the other one too."""
    (first_name, first_label), (second_name, second_label) = first, second
    methods = (first_name, second_name)
    return Analysis(
        "agreement", f"{first_label} and {second_label} on this question",
        f"how far the word rankings of {first_label} and {second_label} agree at each layer: Spearman's rank "
        "correlation over the passage words and the share of top-k words in common, under the chosen token score, "
        "signed against signed and L2 against L2 (the question is explained with both)",
        functools.partial(method_agreement, methods), MethodAgreement, {"agreement": "json"}, optional=True,
        companion=_companions(methods))
