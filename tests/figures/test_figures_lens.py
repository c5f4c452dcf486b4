"""The lens and intervention figures, on results built by hand: they draw exactly the numbers they are given."""
from dataclasses import replace

import numpy as np
import pytest

from rcqa.figures import knockout_reading, knockouts, knockouts_table, layer_answers, layer_answers_table
from rcqa.lens import AnswerLens, LayerReading
from rcqa.lens.interventions import Interventions, KnockoutSettings, LayerKnockouts, Outcome
from rcqa.types import Answer, Example, Span
from tests.helpers.sentences import check_knockout_reading

PASSAGE = "The tower was built by <b>Ellison</b> in 1872."
EXAMPLE = Example("x", PASSAGE, "Who built it?")


def span(text: str, probability: float) -> Span:
    start = PASSAGE.index(text)
    return Span(text, start, start + len(text), 0, 0, 0, 0.0, 0.0, probability)


def handmade_lens() -> AnswerLens:
    final = span("<b>Ellison</b>", 0.7)
    head = [LayerReading(span("1872", 0.2), 5, 0.05, 0.0, 0.0), LayerReading(final, 1, 0.7, 1.0, 1.0)]
    return AnswerLens(example=EXAMPLE, model="m", fingerprint="f", answer=Answer("Who built it?", (final,), 1),
                      window=0, tokens=["[CLS]"], layers=["embeddings", "block 0"],
                      readings={"head": head}, note="no probes")


def test_the_lens_chart_draws_each_layers_span_and_the_final_answer():
    lens = handmade_lens()
    traces = {trace.name: trace for trace in layer_answers(lens).figure.data}
    assert set(traces) == {"head: its own best span", "head: the final answer"}
    assert np.allclose(traces["head: its own best span"].y, [20, 70])
    assert np.allclose(traces["head: the final answer"].y, [5, 70])
    assert [c[1] for c in traces["head: its own best span"].customdata] == [5, 1]
    assert traces["head: its own best span"].customdata[1][0] == "&lt;b&gt;Ellison&lt;/b&gt;"  # escaped for Plotly
    table = layer_answers_table(lens)
    assert table.span.tolist() == ["1872", "<b>Ellison</b>"] and table.final_answer_rank.tolist() == [5, 1]


def outcome(probability: float, flipped: bool = False, words: tuple = (), signed: tuple = ()) -> Outcome:
    return Outcome(words, probability, "a", flipped, signed)


def knocked_out(layers: list[LayerKnockouts], settings: KnockoutSettings) -> Interventions:
    return Interventions(EXAMPLE, "m", "f", Answer("Who built it?", (), 1), 0, ["[CLS]"], "Ellison", outcome(0.8),
                         layers, settings)


def test_the_interventions_chart_draws_drops_with_the_random_spread():
    layers = [LayerKnockouts(0, "embeddings", outcome(0.1, True, ("tower",)), outcome(0.8),
                             (outcome(0.6), outcome(0.8), outcome(0.4, True)), None),
              LayerKnockouts(1, "block 0", outcome(0.5), outcome(0.9), (outcome(0.9),) * 3, outcome(0.2, True))]
    found = knocked_out(layers, KnockoutSettings(1, 3, 0, "zero", "l2", "span_log_prob", True))
    table = knockouts_table(found).set_index(["layer_label", "intervention"])
    assert table.loc[("embeddings", "top-k"), "probability_drop"] == pytest.approx(0.7)
    assert table.loc[("embeddings", "random"), "probability_drop"] == pytest.approx(0.2)  # 0.8 − mean(.6, .8, .4)
    assert table.loc[("embeddings", "random"), "probability_drop_std"] == pytest.approx(np.std([0.6, 0.8, 0.4]))
    assert table.loc[("embeddings", "random"), "flipped"] == pytest.approx(1 / 3)
    assert ("embeddings", "skip block") not in table.index
    assert table.loc[("block 0", "skip block"), "probability_drop"] == pytest.approx(0.6)
    bars = {bar.name: bar for bar in knockouts(found).figure.data}
    assert np.allclose(bars["top-k"].y, [-70, -30]) and list(bars["top-k"].text) == ["flipped", ""]
    assert np.allclose(bars["random"].error_y.array, [100 * np.std([0.6, 0.8, 0.4]), 0])
    assert list(bars["skip block"].x) == ["block 0"]


def test_a_knock_out_that_raises_the_probability_is_drawn_above_zero_and_said_so():
    # bottom-k at block 0 takes p from 0.8 to 0.9: a rise of 10 points, not a drop
    layers = [LayerKnockouts(0, "embeddings", outcome(0.1), outcome(0.8), (outcome(0.8),) * 2, None),
              LayerKnockouts(1, "block 0", outcome(0.5), outcome(0.9), (outcome(0.7),) * 2, outcome(0.2))]
    settings = KnockoutSettings(1, 2, 0, "zero", "l2", "span_log_prob", True)
    chart = knockouts(knocked_out(layers, settings))
    bars = {bar.name: bar for bar in chart.figure.data}
    assert np.allclose(bars["bottom-k"].y, [0, 10]) and np.allclose(bars["random"].y, [0, -10])
    assert knockout_reading(chart.data) == ("Knocking out raised the span's probability instead of lowering it: "
                                            "bottom-k words at 1 of 2 layers.")
    assert "drops" not in chart.figure.layout.title.text
    # the sentence follows the numbers: with bottom-k at block 0 lowering it, none rose
    layers[1] = LayerKnockouts(1, "block 0", outcome(0.5), outcome(0.6), (outcome(0.7),) * 2, outcome(0.2))
    assert knockout_reading(knockouts(knocked_out(layers, settings)).data) == ("No knock-out raised the span's "
                                                                               "probability.")


def test_top_words_that_compete_with_the_span_are_said_to_in_one_sentence_and_a_rise_of_nought_is_none():
    # the orchard's case: the top words outside "600" are the rival numbers, scored against it (signed score < 0)
    # though their magnitude ranks them first; knocking them out raises p from 0.8 to 0.9 and 0.95
    layers = [LayerKnockouts(0, "embeddings", outcome(0.9, words=("1,450", "2,300"), signed=(-1.4, -1.8)),
                             outcome(0.7), (outcome(0.7),) * 2, None),
              LayerKnockouts(1, "block 0", outcome(0.95, words=("1,450", "trees"), signed=(-0.8, 0.5)),
                             outcome(0.6), (outcome(0.7),) * 2, outcome(0.5)),
              # random draws whose mean is 0.8004: +0.04 points, +0.0 as shown, which is no rise
              LayerKnockouts(2, "block 1", outcome(0.5, words=("pear", "trees"), signed=(0.3, 0.2)), outcome(0.8),
                             (outcome(0.8), outcome(0.8008)), outcome(0.1))]
    chart = knockouts(knocked_out(layers, KnockoutSettings(2, 2, 0, "pad", "l2", "span_log_prob", True)))
    top = chart.data[chart.data.intervention == "top-k"]
    assert top.against_span.tolist() == ["1,450, 2,300", "1,450", ""]
    assert knockout_reading(chart.data) == (
        "Knocking out the top-k words at 2 of 3 layers raised the span's probability instead of lowering it, by "
        "+10.0 to +15.0 points. At 2 of those 2 layers they include words that compete with the span, scored "
        "against it (signed score below 0) but ranked first by their magnitude: “1,450”.")
    bars = {trace.name: list(trace.y) for trace in chart.figure.data}
    check_knockout_reading(knockout_reading(chart.data), bars, top.against_span.tolist())
    # the sentence is under the chart, not pasted into its subtitle, which stays one line of settings
    subtitle = chart.figure.layout.title.subtitle.text
    assert "<br>" not in subtitle and "Knocking" not in subtitle and "replaced by [PAD] states" in subtitle
    assert chart.figure.layout.yaxis.title.text == "Change in probability (points)"  # clear of the subtitle
    # one line also for a long span, k = 20 and draws = 20
    long = replace(knocked_out(layers, KnockoutSettings(20, 20, 0, "zero", "l2", "span_log_prob", True)),
                   explained_span="ships approaching the harbour relied on a bonfire")
    assert "<br>" not in knockouts(long).figure.layout.title.subtitle.text
    assert "against the span: %{customdata[2]}" in chart.figure.data[0].hovertemplate


def test_knocked_out_words_keep_their_signed_scores_through_the_json():
    found = knocked_out([LayerKnockouts(0, "embeddings", outcome(0.9, words=("a", "b"), signed=(-1.0, 2.0)),
                                        outcome(0.7), (outcome(0.7),), None)],
                        KnockoutSettings(2, 1, 0, "pad", "l2", "span_log_prob", True))
    again = Interventions.from_dict(found.to_dict())
    assert again.layers[0].topk.signed_scores == (-1.0, 2.0)
    older = found.to_dict()
    del older["layers"][0]["topk"]["signed_scores"]  # a file written before they were kept
    assert Interventions.from_dict(older).layers[0].topk.signed_scores == ()
