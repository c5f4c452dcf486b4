"""Issue 35's cut-off and unreadable figures: subtitles wrap instead of running off the chart, the JSD colours
span the values there are, the heatmap marks where the question ends, t-SNE's answer stands apart from its
sentence, and the n-best table keeps its columns in a narrow column."""
import colorsys
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from rcqa import figures
from rcqa.analysis.projection import GROUPS
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures.common import SUBTITLE_WIDTH, apply_layout
from rcqa.gallery import gallery_example
from tests.helpers.app_harness import read_html
from rcqa.figures.common import axis_words


@pytest.fixture(scope="module")
def result(tiny_bert):
    return explain(tiny_bert, gallery_example("orchard-how-many"), ExplainSettings(steps=8))


def test_a_long_subtitle_wraps_into_lines_that_fit_and_the_margin_makes_room():
    words = " ".join(f"word{i}" for i in range(60))  # 409 characters
    figure = apply_layout(go.Figure(), "Title", words, "x", "y", height=400)
    lines = figure.layout.title.subtitle.text.split("<br>")
    assert len(lines) == 4 and all(len(line) <= SUBTITLE_WIDTH for line in lines)
    assert " ".join(lines) == words  # nothing lost, no word cut
    parts = ["Target: log p(start) + log p(end) of the span", "baseline: pad", "gausslegendre rule",
             "token score: L2 norm of the attribution vector", "the whole passage, 24 windows"]
    shown = apply_layout(go.Figure(), "Title", " · ".join(parts), "x", "y").layout.title.subtitle.text.split("<br>")
    assert len(shown) == 2 and all(len(line) <= SUBTITLE_WIDTH for line in shown)
    assert {part for line in shown for part in line.split(" · ")} == set(parts)  # each part whole, on one line
    short = apply_layout(go.Figure(), "Title", "one line", "x", "y", height=400)
    assert figure.layout.margin.t - short.layout.margin.t == 3 * 16 and figure.layout.height == 400 + 3 * 16


def test_the_jsd_colours_span_the_values_there_are(result):
    heatmap = figures.jsd(result).figure.data[0]
    values = np.asarray(heatmap.z, dtype=float)
    assert heatmap.zmin == 0 and heatmap.zmax == pytest.approx(np.nanmax(values))
    assert heatmap.zmax < 1  # layers of one explanation are never disjoint


def test_the_heatmap_with_the_question_marks_where_the_passage_begins(result):
    plain = figures.heatmap(result).figure
    assert not plain.layout.shapes  # passage words only: nothing to mark
    figure = figures.heatmap(result, include_question=True).figure
    (line,) = figure.layout.shapes
    labels = axis_words(figure.layout.xaxis)
    question_words = labels[:int(line.x0 + 0.5)]
    assert "".join(question_words) == re.sub(r"\W", "", result.example.question)  # its words, without the "?"
    assert figure.layout.annotations[-1].text == "question | passage"


def test_t_sne_draws_the_answer_apart_from_its_sentence():
    def hue(colour: str) -> float:
        red, green, blue = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
        return 360 * colorsys.rgb_to_hsv(red, green, blue)[0]

    apart = abs(hue(GROUPS["answer"]) - hue(GROUPS["answer sentence"]))
    assert min(apart, 360 - apart) > 90  # red against blue, not red against magenta (about 40° apart)


def test_the_nbest_table_keeps_every_column_and_the_whole_answer_on_hover(result):
    markup = figures.nbest_html(result.answer)
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", markup)
    assert headers == ["rank", "answer", "probability", "start / end logit", "window"]
    titles = re.findall(r'title="characters (\d+)–(\d+): ([^"]*)"', markup)
    passage = result.example.passage
    assert len(titles) == len(result.answer.nbest)
    assert all(passage[int(start):int(end)] == text for start, end, text in titles)  # hover: the span, whole
    assert "white-space: nowrap" in markup and read_html(markup)[1]  # the numbers on one line
