"""Results of every kind built by hand (tests/helpers/handmade_comparison.py has the Comparison): a whole-passage contrast
Attribution, an AnswerLens with two readers and Interventions, with HTML in the passage to check escaping."""
import dataclasses

import numpy as np

from rcqa.lens.interventions import Interventions, KnockoutSettings, LayerKnockouts, Outcome
from rcqa.lens.readout import AnswerLens, LayerReading
from rcqa.types import Answer, AnswerSettings, Attribution, Example, Foil, GoldAnswer, ExplainSettings, Span, Windowing
from tests.helpers.handmade import handmade

PASSAGE = "The tower was built by <b>Ellison</b> in 1872."
EXAMPLE = Example("tower", PASSAGE, "Who built it?", answers=(GoldAnswer("Ellison", PASSAGE.index("Ellison")),))
ELLISON = Span("<b>Ellison</b>", 23, 37, 6, 9, 0, 4.0, 3.5, 0.7)
YEAR = Span("1872", 41, 45, 11, 11, 0, 1.0, 0.5, 0.2)
ANSWER = Answer("Who built it?", (ELLISON, YEAR), 1, AnswerSettings("m", 32, 8, 30, 20, True))


def contrast_result() -> Attribution:
    """A hand-built whole-passage contrast of "600" against the foil "250", with layer outputs."""
    result = handmade([("How", "WRB"), ("many", "JJ")],
                      [("600", "CD", [1.0, 2.0]), ("apple", "NN", [0.5, 0.25]), ("trees", "NNS", [0.0, 1.0]),
                       ("and", "CC", [1.0, 1.0]), ("250", "CD", [3.0, 0.5])], explained=(0, 0))
    explained = result.targets[0]
    foil = Foil("distractor-number", "250", 20, 23, 1, 9, 9, 1.25, 0.125)
    contrast = dataclasses.replace(explained, name="contrast", description="log p(span) − log p(foil)", foil=foil,
                                   foil_start_token=9, foil_end_token=9, foil_score=0.0)
    null = dataclasses.replace(explained, name="null", null_token=0, null_window=1)
    return dataclasses.replace(
        result, targets=[contrast, null], scores=np.concatenate([result.scores, 2 * result.scores]),
        settings=ExplainSettings(targets=("null",), contrast="distractor-number", windows="all", steps=4, tolerance=None),
        windowing=Windowing(max_len=32, doc_stride=8, n_windows=3, windows_read=(0, 1)), seconds=1.5,
        hidden_states=np.arange(2 * len(result.tokens) * 4, dtype=np.float32).reshape(2, len(result.tokens), 4))


def hand_lens() -> AnswerLens:
    head = [LayerReading(YEAR, 2, 0.05, 0.0, 0.0), LayerReading(ELLISON, 1, 0.7, 1.0, 1.0)]
    probe = [LayerReading(None, None, 0.0), LayerReading(ELLISON, 1, 0.6, 1.0, 1.0)]
    return AnswerLens(EXAMPLE, "m", "f", ANSWER, 0, ["[CLS]", "who"], ["embeddings", "block 0"],
                      {"head": head, "probe": probe}, probes={"dev_f1": [10.0, 80.0]})


def hand_interventions() -> Interventions:
    def outcome(p: float, flipped: bool = False, words: tuple = ()) -> Outcome:
        return Outcome(words, p, "1872" if flipped else "<b>Ellison</b>", flipped)

    layers = [LayerKnockouts(0, "embeddings", outcome(0.1, True, ("tower", "built")), outcome(0.65, words=("in",)),
                             (outcome(0.6, words=("The",)), outcome(0.3, True, ("by",))), None),
              LayerKnockouts(1, "block 0", outcome(0.5, words=("tower",)), outcome(0.7, words=("in",)),
                             (outcome(0.7, words=("The",)), outcome(0.69, words=("was",))), outcome(0.2, True))]
    return Interventions(EXAMPLE, "m", "f", ANSWER, 0, ["[CLS]", "who"], "<b>Ellison</b>", outcome(0.7), layers,
                         KnockoutSettings(1, 2, 7, "zero", "l2", "span_log_prob", True))
