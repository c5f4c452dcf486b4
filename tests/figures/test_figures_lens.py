"""The lens and intervention figures, on results built by hand: they draw exactly the numbers they are given."""
import numpy as np
import pytest

from rcqa.figures import knockouts, knockouts_table, layer_answers, layer_answers_table
from rcqa.lens import AnswerLens, LayerReading
from rcqa.lens.interventions import Interventions, KnockoutSettings, LayerKnockouts, Outcome
from rcqa.types import Answer, Example, Span

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


def outcome(probability: float, flipped: bool = False, words: tuple = ()) -> Outcome:
    return Outcome(words, probability, "a", flipped)


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
    subtitle = chart.figure.layout.title.subtitle.text
    assert "1 knock-out raised the span's probability instead of lowering it: bottom-k at block 0 (+10.0 points)" \
        in subtitle
    assert "drops" not in chart.figure.layout.title.text
    # the sentence follows the numbers: with bottom-k at block 0 lowering it, none rose
    layers[1] = LayerKnockouts(1, "block 0", outcome(0.5), outcome(0.6), (outcome(0.7),) * 2, outcome(0.2))
    lowered = knockouts(knocked_out(layers, settings))
    assert "No knock-out raised the span's probability." in lowered.figure.layout.title.subtitle.text
