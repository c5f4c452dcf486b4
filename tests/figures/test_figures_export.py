"""Issue 61.10: a heatmap's PNG and SVG carry every word, not the page's view frozen (a page of its words, the range
slider, "drag the slider"): a paged heatmap and the side-by-side heatmaps export a figure of their own, one row per
word, which the image jobs draw (Chart.printed, through the stored chart the pages hold)."""
import json

import numpy as np
import pytest

from rcqa.analysis.pair import compare
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures import PAGE_WORDS, heatmap, image_export_available
from rcqa.figures.pair import pair_heatmaps
from rcqa.figures.stored import FigureJSON, stored
from rcqa.gallery import gallery_example
from rcqa.text import written_words
from tests.helpers.handmade import handmade


@pytest.fixture(scope="module")
def orchard(tiny_bert):
    return explain(tiny_bert, gallery_example("orchard-how-many"), ExplainSettings(steps=2, tolerance=None))


def words_of(text: str) -> list[str]:
    """The words a heatmap shows, counted apart from the figures: every written word but punctuation."""
    return [word.text for word in written_words(text) if not word.is_punctuation]


def printed_rows(figure) -> list[str]:
    """The word labels of a printed figure, column of words after column, top to bottom."""
    layout = figure.to_plotly_json()["layout"]
    axes = sorted((name for name in layout if name.startswith("yaxis")), key=lambda name: int(name[5:] or 1))
    return [label for name in axes if layout[name].get("showticklabels") for label in layout[name]["ticktext"]]


def assert_whole_and_still(figure) -> None:
    """No range slider, no word of dragging or sliding, every row tall enough for its label."""
    spec = figure.to_plotly_json()
    layout = spec["layout"]
    assert not any(axis.get("rangeslider", {}).get("visible") for name, axis in layout.items() if name.startswith("x"))
    assert "drag" not in json.dumps(spec).lower() and "slider" not in json.dumps(spec).lower()
    rows = max(len(axis["ticktext"]) for name, axis in layout.items() if name.startswith("yaxis"))
    size = layout["yaxis"]["tickfont"]["size"]
    assert size >= 10 and (layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]) / rows >= 1.2 * size


def test_a_paged_heatmap_exports_every_word_without_its_slider(orchard):
    words = words_of(orchard.example.passage)
    assert len(words) == 69  # more than the page's 60: the page shows a slider
    chart = heatmap(orchard)
    assert chart.figure.layout.xaxis.rangeslider.visible  # the page's figure pages ...
    assert printed_rows(chart.printed) == words  # ... the export holds every word, in order
    assert_whole_and_still(chart.printed)
    assert chart.printed is chart.export
    asked = heatmap(orchard, include_question=True)
    question = words_of(orchard.example.question)
    assert printed_rows(asked.printed) == question + words
    (line,) = asked.printed.layout.shapes  # between the question's last word and the passage's first
    assert line.y0 == pytest.approx(len(question) - 0.5)


def test_side_by_side_exports_both_heatmaps_and_their_difference_for_every_word(orchard):
    chart = pair_heatmaps(compare(orchard, orchard))
    words = words_of(orchard.example.passage)
    assert printed_rows(chart.printed) == words
    assert_whole_and_still(chart.printed)
    names = [chart.printed.layout[f"xaxis{'' if n == 1 else n}"].title.text for n in (1, 2, 3)]
    assert names == ["A", "B", "B − A (points)"]
    panels = np.asarray(chart.printed.data[0].z, dtype=float)  # A's first column of words: words × layers
    assert np.allclose(panels.T, np.asarray(chart.figure.data[0].z, dtype=float)[:, :panels.shape[0]])


def test_a_heatmap_the_page_shows_whole_exports_itself(tiny_bert):
    result = explain(tiny_bert, gallery_example("choir-how-many"), ExplainSettings(steps=2, tolerance=None))
    assert len(words_of(result.example.passage)) <= PAGE_WORDS
    chart = heatmap(result)
    assert chart.export is None and chart.printed is chart.figure
    assert not chart.figure.layout.xaxis.rangeslider.visible


@pytest.mark.skipif(not image_export_available(), reason="kaleido finds no local Chromium")
def test_the_image_a_page_downloads_is_the_whole_heatmap(orchard):
    kept = stored(heatmap(orchard))  # what a page holds, and hands the image job (Chart.printed's JSON)
    assert isinstance(kept.printed, FigureJSON) and printed_rows(kept.printed) == words_of(orchard.example.passage)
    svg = kept.image("svg").decode()
    assert svg.lstrip().startswith("<svg") and "drag" not in svg and "rangeslider" not in svg
    last = words_of(orchard.example.passage)[-1]  # far past the page's first 60 words
    assert f">{last}<" in svg


def test_a_long_passage_wraps_into_columns_that_hold_each_word_once():
    text = " ".join(f"w{i}" for i in range(301))  # 301 words: six columns of 51 and 50 words
    result = handmade([("Who", "WP")], [(f"w{i}", "NN", [float(i % 5), 1.0]) for i in range(301)],
                      explained=(0, 0), passage_text=text)
    printed = heatmap(result).printed
    assert printed_rows(printed) == text.split()  # no word twice, none left out, in order
    layout = printed.to_plotly_json()["layout"]
    columns = [axis["ticktext"] for name, axis in layout.items() if name.startswith("yaxis")]
    assert sorted(len(column) for column in columns) == [50] * 5 + [51]
    spans = {axis["range"][0] - axis["range"][1] for name, axis in layout.items() if name.startswith("yaxis")}
    assert spans == {51}  # every column's rows as high as the longest's
