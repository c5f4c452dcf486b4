"""Issue 61.9: under a signed token score (the signed sum) every heatmap draws each word's share with its sign, on
colours diverging around 0 over a range symmetric about it, so that a word against the answer shows; a magnitude
keeps its one hue from 0. Results built by hand, numbers worked out on paper."""
from dataclasses import replace

import numpy as np
import pytest
from plotly.colors import sample_colorscale, unlabel_rgb

from rcqa.analysis.pair import compare
from rcqa.figures import heatmap
from rcqa.figures.pair import pair_heatmaps
from rcqa.figures.whole_input import passage_overview, start_end
from tests.helpers.handmade import handmade

QUESTION = [("Who", "WP"), ("?", ".")]


def against(scores: list[float]):
    """One layer; the passage words w0 w1 ... score as given (the same under every token score: built by hand)."""
    return handmade(QUESTION, [(f"w{i}", "NN", [score]) for i, score in enumerate(scores)], explained=(0, 0))


def colour_of(trace, value: float) -> tuple[float, float, float]:
    """The RGB a heatmap trace draws `value` in: its place between zmin and zmax on its colour scale."""
    place = (value - trace.zmin) / (trace.zmax - trace.zmin)
    scale = [[stop, colour] for stop, colour in trace.colorscale]
    if trace.reversescale:
        scale = [[1 - stop, colour] for stop, colour in reversed(scale)]
    return unlabel_rgb(sample_colorscale(scale, [place])[0])


def test_a_signed_heatmap_draws_a_word_against_the_answer_from_the_scales_negative_end():
    chart = heatmap(against([3.0, -1.0]), "sum")  # |3| + |−1| = 4: +75% and −25% of the layer's |attribution|
    (trace,) = chart.figure.data
    assert np.allclose(np.asarray(trace.z, dtype=float), [[75, -25]])
    assert trace.zmid == 0 and trace.zmin == -trace.zmax == -75  # symmetric about 0
    red, _, blue = colour_of(trace, -25)
    assert red > blue  # against: red
    red, _, blue = colour_of(trace, 75)
    assert blue > red  # for: blue
    assert "signed share" in trace.colorbar.title.text.lower() and "|attribution|" in trace.colorbar.title.text
    assert "signed share" in chart.figure.layout.title.subtitle.text
    assert chart.data.share_pct.tolist() == pytest.approx([75, 25])  # the table keeps the paper's distribution


def test_a_magnitude_keeps_one_hue_from_zero():
    (trace,) = heatmap(against([3.0, 1.0]), "l2").figure.data
    assert np.allclose(np.asarray(trace.z, dtype=float), [[75, 25]])
    assert trace.zmin == 0 and trace.zmid is None
    assert [colour for _, colour in trace.colorscale] == [colour for _, colour in heatmap(
        against([1.0, 1.0]), "abs_sum").figure.data[0].colorscale]  # one scale for every magnitude
    assert "signed" not in trace.colorbar.title.text.lower()


def is_diverging(trace) -> bool:
    return trace.zmid == 0 and trace.zmin == -trace.zmax


def test_every_view_of_a_signed_score_diverges_around_zero():
    words = [3.0, -1.0] * 40  # 80 words: a paged heatmap, which exports every word
    result = against(words)
    chart = heatmap(result, "sum")
    assert is_diverging(chart.figure.data[0]) and all(is_diverging(trace) for trace in chart.export.data)
    assert min(np.nanmin(np.asarray(trace.z, dtype=float)) for trace in chart.export.data) < 0
    assert is_diverging(passage_overview(result, aggregation="sum", page_words=20).figure.data[0])
    assert is_diverging(result.show("heatmap", aggregation="sum").data[0])  # the API's figure is the heatmap's
    pair = pair_heatmaps(compare(result, result, aggregation="sum"))
    assert all(is_diverging(trace) for trace in pair.figure.data[:2] + pair.export.data)
    assert np.asarray(pair.figure.data[0].z, dtype=float)[0, 1] == pytest.approx(-100 / 160)  # 40 × (3 + 1)
    ends = replace(result, targets=[replace(result.targets[0], name=name) for name in ("start_logit", "end_logit")],
                   scores=np.concatenate([result.scores, result.scores]))
    assert all(is_diverging(trace) for trace in start_end(ends, "sum").figure.data)


def test_magnitudes_stay_one_hue_in_every_view():
    result = against([3.0, 1.0] * 40)
    chart = heatmap(result, "l2")
    assert all(trace.zmin == 0 and trace.zmid is None for trace in chart.figure.data + chart.export.data)
    assert passage_overview(result, page_words=20).figure.data[0].zmin == 0
    pair = pair_heatmaps(compare(result, result))
    assert all(trace.zmin == 0 and trace.zmid is None for trace in pair.figure.data[:2])
