"""The Methods page's figures, on the comparison built by hand: what they draw is checked against the numbers in
tests/helpers/handmade_comparison.py."""
import dataclasses

import numpy as np
import pyarrow as pa
import pytest

from rcqa.faithfulness.deletion import Reanswer
from rcqa.types import Answer, Span

from rcqa.figures import methods
from tests.helpers.app_harness import read_html
from tests.helpers.handmade_comparison import PASSAGE, handmade_comparison


@pytest.fixture(scope="module")
def comparison():
    return handmade_comparison()


def test_the_heatmap_shows_every_method_and_random_over_the_passage_words(comparison):
    chart = methods.method_heatmap(comparison)
    trace = chart.figure.data[0]
    assert list(trace.y) == ["Gradient sensitivity", "Attention tracing", "Random"]
    z = np.asarray(trace.z)
    assert z.shape == (3, 10) and np.allclose(z.max(axis=1), 1.0)
    assert np.allclose(z[0], [7, 6, 5, 9, 8, 4, 3, 2, 1, 0] / np.float64(9))  # word scores over the top word's 9
    assert chart.data[chart.data.method == "Gradient sensitivity"]["rank"].tolist() == [3, 4, 5, 1, 2, 6, 7, 8, 9, 10]


def test_the_passages_are_shaded_by_score_ranked_and_escaped(comparison):
    chart = methods.method_passages(comparison, k=2)
    tags, text = read_html(chart.html)
    assert "5<6" in text and "5<6" not in chart.html  # the passage's text, escaped: no tag comes from it
    assert tags == {"div", "table", "tr", "td", "strong", "mark", "sup", "span", "p"}
    assert text.count(PASSAGE.replace("5<6", "").split()[0]) == 3  # once per method and random
    # the gradient's top two words carry ranks 1 and 2, and its top word is the darkest
    assert 'rgba(230, 126, 34, 1.00); padding: 1px 2px; border-radius: 3px;"><span' in chart.html
    assert "w3</span><sup>1</sup>" in chart.html and ">w4<sup>2</sup>" in chart.html
    assert "<sup>3</sup>" not in chart.html and "border-bottom" in chart.html  # the explained span is underlined


def test_the_deletion_curves_draw_random_as_its_mean_and_the_range_of_its_draws(comparison):
    chart = methods.deletion_curves(comparison)
    band, mean, *lines = chart.figure.data
    assert band.fill == "toself" and band.name == "random: range of 2 draws"
    # max over the draws at k = 0..3, then min backwards: .8 .8 .7 .6 | .4 .5 .6 .8
    assert np.allclose(band.y, [80, 80, 70, 60, 40, 50, 60, 80])
    assert np.allclose(mean.y, [80, 70, 60, 50])
    assert [line.name for line in lines] == ["Gradient sensitivity", "Attention tracing"]
    assert np.allclose(lines[0].y, [80, 50, 30, 20])


def test_the_table_and_the_readings_hold_the_computed_numbers(comparison):
    table = methods.faithfulness_table(comparison)
    gradient = table[table.method == "Gradient sensitivity"].iloc[0]
    assert gradient.comprehensiveness == pytest.approx(0.5) and gradient.AOPC == pytest.approx(0.35)
    assert table.method.tolist()[-3:] == ["random (mean of 2 draws)", "random (the lowest of its draws)",
                                          "random (the highest of its draws)"]
    assert table.AOPC.tolist()[-2:] == pytest.approx([0.075, 0.225])
    # numbers only in the measures' columns: Arrow (st.dataframe) converts them as float64
    assert {str(t) for t in pa.Table.from_pandas(table).schema.types[1:]} == {"double"}
    (gradient_name, sentence), _ = methods.method_readings(comparison)
    assert gradient_name == "Gradient sensitivity" and "2.0× the drop of random deletion" in sentence
    assert "Its comprehensiveness (" in sentence and f"is {gradient.comprehensiveness:.3f}, above every" in sentence


def test_the_probability_note_names_both_measures_of_the_same_span(comparison):
    assert "80% with nothing deleted" in methods.probability_note(comparison)  # no n-best span here: one measure
    assert "Explore's" not in methods.probability_note(comparison)
    # the case: p(start)·p(end) 68 % here, the span's n-best share 69.3 % on Explore
    start, end = comparison.span_chars
    with_span = dataclasses.replace(comparison, original=Reanswer(0.68, (start, end), "w3"), answer=Answer(
        "q ?", (Span("w3", start, end, 7, 7, 0, 1.0, 1.0, 0.693),), 1))
    note = methods.probability_note(with_span)
    assert "p(start) · p(end) of “w3” in its window" in note and "68% with nothing deleted" in note
    assert "Explore's 69.3% for the same span is another measure, its share among the candidate spans" in note


def test_the_rank_correlation_of_two_opposite_rankings_is_minus_one(comparison):
    chart = methods.rank_correlation(comparison, "kendall")
    assert np.allclose(np.asarray(chart.figure.data[0].z), [[1, -1], [-1, 1]])
    assert "Kendall" in chart.figure.layout.title.text
