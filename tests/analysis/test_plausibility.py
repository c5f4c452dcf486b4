"""DynamicLRP's plausibility at every layer (issue 55), on a result built by hand: each measure worked out on paper
for both rankings, and, on the tiny model, a run's rows carry it."""
from __future__ import annotations

import dataclasses
import math

from rcqa.analysis.plausibility import plausibility
from rcqa.analysis.registry import Inputs
from rcqa.types import Example, GoldAnswer
from tests.helpers.handmade import handmade

PASSAGE = "Ada built the tower in 1872. It stands."
# (word, tag, [layer 0, layer 1]); 1872 is two pieces, scored [piece 1, piece 2] per layer
WORDS = [("Ada", "NNP", [0.1, 0.0]), ("built", "VBD", [0.2, 0.0]), ("the", "DT", [0.0, 0.0]),
         ("tower", "NN", [0.5, -0.6]), ("in", "IN", [0.1, 0.0]), ("1872", "CD", [[0.3, 0.4], [0.5, 0.2]]),
         (".", ".", [0.0, 0.0]), ("It", "PRP", [0.05, 0.0]), ("stands", "VBZ", [0.9, 0.05]), (".", ".", [0.0, 0.0])]


def lighthouse_by_hand():
    result = handmade([("When", "WRB")], WORDS, explained=(5, 5), passage_text=PASSAGE)
    gold = GoldAnswer(text="the tower", start_char=PASSAGE.index("the tower"))
    return dataclasses.replace(result, example=Example(id="hand", passage=PASSAGE, question="When",
                                                       answers=(gold,)))


def test_each_measure_at_each_layer_as_worked_out_on_paper():
    found = plausibility(Inputs(lighthouse_by_hand())).measures
    # layer 0: stands (0.9) leads, then tower (0.5): neither in the span "1872" nor a gold token for stands; the
    # first sentence (1.6 against 0.95) holds the span. Layer 1 by magnitude: tower (0.6), then 1872's first piece
    # (0.5): top-1 in the gold span only, one of the top two in the span, IoU 1 / 3; signed: 1872's two pieces
    # (0.5, 0.2) lead: IoU 1. The first sentence sums 0.1 against 0.05 (signed and in magnitude).
    assert found["magnitude"] == {"top1_predicted": [0.0, 0.0], "top1_gold": [0.0, 1.0], "top2_predicted": [0.0, 1.0],
                                  "iou_predicted": [0.0, 0.3333], "top1_sentence": [1.0, 1.0]}
    assert found["signed"] == {"top1_predicted": [0.0, 1.0], "top1_gold": [0.0, 0.0], "top2_predicted": [0.0, 1.0],
                               "iou_predicted": [0.0, 1.0], "top1_sentence": [1.0, 1.0]}


def test_a_layer_with_no_score_and_a_window_without_gold_are_undefined():
    silent = [(text, tag, [0.0, 0.0] if text != "1872" else [[0.0, 0.0], [0.0, 0.0]]) for text, tag, _ in WORDS]
    found = plausibility(Inputs(handmade([("When", "WRB")], silent, explained=(5, 5), passage_text=PASSAGE)))
    assert all(value is None for ranking in found.measures.values() for values in ranking.values()
               for value in values)
    no_gold = plausibility(Inputs(handmade([("When", "WRB")], WORDS, explained=(5, 5), passage_text=PASSAGE)))
    assert no_gold.measures["magnitude"]["top1_gold"] == [None, None]
    assert not math.isnan(no_gold.measures["magnitude"]["top1_predicted"][0])
