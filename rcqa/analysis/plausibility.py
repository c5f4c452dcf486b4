"""Plausibility at every layer: does the explanation's most relevant token fall where the answer is? DynamicLRP's
protocol (arXiv 2512.07010, SQuAD v2's answerable questions) for extractive QA, read at the output of every layer
and under both rankings (magnitude: the token score the run reads; signed: the signed sum, largest first), over the
window's passage tokens:

- top-1 in the predicted span: the top token is one of the explained span's tokens;
- top-1 in the gold span: it is one of any gold answer's tokens (undefined where no gold answer is in the window);
- top-2: one of the two top tokens is in the explained span;
- IoU: of the top-|span| tokens with the explained span's |span| tokens;
- top-1 sentence: the sentence with the largest score (rcqa.types.granularity) holds the explained span.

Each is 1 or 0 per question and layer (IoU a fraction), undefined (NaN) where a layer scores no passage token, so a
run's mean is the share of questions. Plausibility is agreement with where the answer is, not evidence that the
model relied on it (faithfulness): a method can point at the answer without the model reading it there."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rcqa.analysis.registry import Analysis, Inputs, json_list
from rcqa.types import Attribution, overlaps

RANKINGS = {"magnitude": None, "signed": "sum"}  # the ranking → the token score it reads (None: the run's own)
MEASURES = ("top1_predicted", "top1_gold", "top2_predicted", "iou_predicted", "top1_sentence")
COLUMNS = tuple(f"plausibility_{ranking}_{measure}" for ranking in RANKINGS for measure in MEASURES)


def passage_tokens(result: Attribution) -> np.ndarray:
    return np.flatnonzero([segment == "passage" for segment in result.token_segments])


def gold_tokens(result: Attribution, passage: np.ndarray) -> set[int]:
    """The window's passage tokens that overlap any gold answer's characters."""
    spans = [(a.start_char, a.start_char + len(a.text)) for a in result.example.answers]
    return {int(t) for t in passage for start, end in spans
            if overlaps(result.token_offsets[t][0], result.token_offsets[t][1], start, end)}


def layer_measures(scores: np.ndarray, passage: np.ndarray, span: set[int], gold: set[int]) -> dict[str, float]:
    """The token measures of one layer's token scores (larger: more relevant); NaN where no passage token scores."""
    values = scores[passage]
    if not np.any(values != 0) or not span:
        return dict.fromkeys(MEASURES[:4], float("nan"))
    order = passage[np.argsort(-values, kind="stable")]
    top = set(order[:len(span)].tolist())
    overlap = len(top & span)
    return {"top1_predicted": float(order[0] in span),
            "top1_gold": float(order[0] in gold) if gold else float("nan"),
            "top2_predicted": float(bool({int(t) for t in order[:2]} & span)),
            "iou_predicted": overlap / (2 * len(span) - overlap)}


def sentence_hits(result: Attribution, aggregation: str, signed: bool, target: int) -> np.ndarray:
    """Per layer, 1 where the passage sentence with the largest score holds the explained span (NaN: none scores)."""
    units = result.granularity("sentence", aggregation, target)  # type: ignore[arg-type]
    return np.array([np.nan if top is None or units.answer_unit is None else float(top == units.answer_unit)
                     for top in units.strongest(signed)])


@dataclass(frozen=True)
class Plausibility:
    """Per ranking and measure, one value per layer (None where undefined)."""

    measures: dict[str, dict[str, list]]

    def to_dict(self) -> dict:
        return {"plausibility": self.measures}

    @classmethod
    def from_dict(cls, document: dict) -> Plausibility:
        return cls(document["plausibility"])

    def row(self) -> dict:
        return {f"plausibility_{ranking}_{measure}": values
                for ranking, measures in self.measures.items() for measure, values in measures.items()}


def plausibility(inputs: Inputs) -> Plausibility:
    result, target = inputs.result, inputs.target
    passage = passage_tokens(result)
    explained = result.targets[target]
    span = {int(t) for t in passage if explained.start_token <= t <= explained.end_token}
    gold = gold_tokens(result, passage)
    measures = {}
    for ranking, score in RANKINGS.items():
        aggregation = score or inputs.aggregation
        tokens = result.layer_scores(aggregation, target)  # type: ignore[arg-type]
        per_layer = [layer_measures(row if ranking == "signed" else np.abs(row), passage, span, gold)
                     for row in tokens]
        found = {measure: json_list(np.array([layer[measure] for layer in per_layer]), 4)
                 for measure in MEASURES[:4]}
        found["top1_sentence"] = json_list(sentence_hits(result, aggregation, ranking == "signed", target), 4)
        measures[ranking] = found
    return Plausibility(measures)


PLAUSIBILITY = Analysis("plausibility", "Does each layer point at the answer?",
                        "DynamicLRP's plausibility at every layer, by magnitude and signed: the top token inside the "
                        "predicted and the gold span, the top two, the IoU of the top-|span| tokens with the span, and "
                        "the top sentence holding the answer", plausibility, Plausibility,
                        dict.fromkeys(COLUMNS, "per_layer"))
