"""Figures built from real explanations on a tiny model: what they draw, how they label it, what they escape."""
import json

import numpy as np
import pytest

from rcqa import figures
from rcqa.analysis.projection import GROUPS, token_groups
from rcqa.analysis.roles.shares import category_shares
from rcqa.analysis.words import passage_distribution
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.types import Example
from tests.helpers.app_harness import read_html
from rcqa.figures.common import axis_words

HOSTILE = Example(id="hostile", title="<i>title</i>", question="Who built the <b>tower</b>?",
                  passage="The tower <script>alert(1)</script> was built by <b>Margaret Ellison</b> (rated 5<6) "
                          "in 1872 & opened in 1880.")


@pytest.fixture(scope="module")
def result(tiny_bert):
    return explain(tiny_bert, gallery_example("orchard-how-many"), ExplainSettings(steps=8))


@pytest.fixture(scope="module")
def hostile(tiny_bert):
    return explain(tiny_bert, HOSTILE, ExplainSettings(steps=4, tolerance=None))


def test_the_heatmap_puts_passage_words_in_order_against_labelled_layers(result):
    chart = figures.heatmap(result)
    (trace,) = chart.figure.data
    words = result.passage_words()
    assert list(trace.y) == ["embeddings", "block 0", "block 1", "block 2"]
    assert np.asarray(trace.z).shape == (4, len(words))
    assert np.allclose(np.asarray(trace.z), 100 * passage_distribution(result))  # the paper's I_l, in %
    assert list(chart.data.start_char[chart.data.layer == 0]) == sorted(w.start_char for w in words)
    hover = np.asarray(trace.customdata)
    answer_word = figures.answer_word(result)
    assert hover[0, answer_word, 0] == words[answer_word].text and hover[0, answer_word, 3].startswith("answer")
    assert sorted(hover[2, :, 2].astype(int)) == list(range(1, len(words) + 1))  # ranks within the layer
    layout = chart.figure.layout
    assert layout.xaxis.title.text.startswith("Words of the analysed window (passage words")
    assert layout.yaxis.title.text.startswith("Layer") and "Target:" in layout.title.subtitle.text


def test_the_heatmap_can_show_the_question_words_first(result):
    chart = figures.heatmap(result, include_question=True)
    first_layer = chart.data[chart.data.layer == 0]
    question = [w.text for w in result.words if w.segment == "question" and not w.is_punctuation]
    assert list(first_layer.word[:len(question)]) == question
    assert set(first_layer.category[:len(question)]) == {"question"}
    assert np.allclose(np.asarray(chart.figure.data[0].z).sum(axis=1), 100)


def test_top_k_views_mark_k_words_per_layer_and_underline_the_answer(result):
    one = figures.topk_passage(result, 1, k=3)
    assert one.html.count("<mark") == 3 and "border-bottom" in one.html
    assert list(one.data["rank"]) == [1, 2, 3] and set(one.data.layer) == {1}
    grid = figures.topk_grid(result, k=3)
    assert grid.html.count("<mark") == 3 * len(result.layers) and grid.html.count("<tr>") == len(result.layers)


def test_every_html_view_escapes_passage_and_question_text(hostile):
    views = [figures.topk_passage(hostile, 0).html, figures.topk_grid(hostile).html,
             figures.answer_passage(HOSTILE, hostile.answer), figures.answer_summary(HOSTILE, hostile.answer),
             figures.example_heading(HOSTILE, "<img src=x onerror=alert(1)>"), figures.nbest_html(hostile.answer)]
    for markup in views:
        tags, _ = read_html(markup)
        assert not tags & {"script", "b", "i", "img"}, tags
    for markup in views[:3]:
        assert HOSTILE.passage.split(" opened")[0] in read_html(markup)[1]  # up to the "&"
    assert "&lt;" in views[0] and "&amp;" in views[0]


REORDERING = Example(id="bidi", title="Price list", question="What does the ticket cost?",
                    passage="The ticket costs \u202e0001\u202c dollars, said \u2067Margaret\u2069 Ellison\u200f.")


def test_no_view_lets_a_bidirectional_control_reorder_the_passage(tiny_bert):
    reordering = explain(tiny_bert, REORDERING, ExplainSettings(steps=4, tolerance=None))
    views = [figures.topk_passage(reordering, 0).html, figures.topk_grid(reordering).html,
             figures.answer_passage(REORDERING, reordering.answer),
             figures.answer_summary(REORDERING, reordering.answer), figures.example_heading(REORDERING, "m"),
             figures.nbest_html(reordering.answer), *axis_words(figures.heatmap(reordering).figure.layout.xaxis)]
    for markup in views:
        assert not set(markup) & set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    # the characters shown are the passage's, in its order, less the controls
    assert "The ticket costs 0001 dollars, said Margaret Ellison." in read_html(views[2])[1]


def test_plotly_labels_escape_words(hostile):
    ticks = axis_words(figures.heatmap(hostile).figure.layout.xaxis)
    assert "5&lt;6" in ticks and not any("<" in tick for tick in ticks)
    index = [w.text for w in hostile.passage_words()].index("5<6")
    assert figures.word_across_layers(hostile, index).figure.layout.title.text.startswith("“5&lt;6”")


def test_layer_roles_stack_to_a_hundred_and_keep_the_papers_shares(result):
    chart = figures.roles(result, k=5)
    exclusive = chart.data[chart.data.measure == "exclusive"]
    assert np.allclose(exclusive.groupby("layer").share_pct.sum(), 100)
    # no contrast: no foil; and no stack the exclusive labels never fill
    assert [trace.name for trace in chart.figure.data if trace.type == "bar"] == [
        "answer", "answer+query", "supporting", "supporting+query", "query", "other"]
    # over the bars, the answer's ceiling in the top-5 and its share of the attribution (tests/figures/test_roles_chart.py)
    assert [trace.name for trace in chart.figure.data if trace.type == "scatter"] == [
        "answer's ceiling: its 1 word of 5", "answer's share of the layer's attribution"]
    assert chart.figure.layout.yaxis.title.text == "% of the layer's top-5 words (bars) or attribution (line)"
    paper = chart.data[chart.data.measure == "paper (overlapping)"]
    expected = category_shares(result, passage_distribution(result), 5)
    for name, shares in expected.items():
        assert np.allclose(paper[paper.category == name].share_pct, shares)
    readings = figures.role_readings(result)
    assert [phase.split(" ")[0] for phase, _ in readings] == ["Early", "Middle", "Late"]


def test_quantifier_ratio_only_for_how_many_questions(result, tiny_bert):
    chart = figures.quantifiers(result)
    assert chart is not None and len(chart.data) == len(result.layers)
    assert chart.figure.layout.yaxis.title.text == "Passage numbers in the top-k (%)"  # short: clear of the subtitle
    who = explain(tiny_bert, gallery_example("comet-who"), ExplainSettings(steps=4, tolerance=None))
    assert figures.quantifiers(who) is None


def test_one_word_across_layers_matches_the_heatmap_column(result):
    word = figures.answer_word(result)
    chart = figures.word_across_layers(result, word)
    (bars,) = chart.figure.data
    heat = np.asarray(figures.heatmap(result).figure.data[0].z)
    assert np.allclose(bars.y, heat[:, word]) and list(bars.x) == result.layers
    assert all(text.startswith("#") for text in bars.text)
    assert figures.word_choices(result)[word].startswith(result.passage_words()[word].text)


def test_completeness_per_layer_flags_layers_over_the_threshold(tiny_bert):
    coarse = explain(tiny_bert, gallery_example("bakery-where"), ExplainSettings(steps=1, tolerance=None))
    chart = figures.completeness(coarse, threshold=0.05)
    bars, threshold_legend = chart.figure.data
    errors = np.array([c.relative_error for c in coarse.completeness])
    assert np.allclose(bars.y, np.maximum(100 * errors, 1e-6)) and chart.figure.layout.yaxis.type == "log"
    assert all(text.endswith("· 1 step") for text in bars.text)
    assert list(bars.marker.color) == ["#d62728" if e > 0.05 else "#2ca02c" for e in errors]
    assert chart.figure.layout.shapes[0].y0 == 5 and threshold_legend.name == "warning above 5%"
    assert figures.incomplete_layers(coarse, 0.05) == [coarse.layers[i] for i in np.flatnonzero(errors > 0.05)]
    assert figures.incomplete_layers(coarse, 1e9) == []


@pytest.mark.parametrize("variant", ["full", "topk_removed", "topk_kept"])
def test_the_jsd_matrix_is_symmetric_with_a_zero_diagonal(result, variant):
    chart = figures.jsd(result, variant)
    matrix = np.asarray(chart.figure.data[0].z)
    assert matrix.shape == (4, 4) and np.allclose(matrix, matrix.T) and np.allclose(np.diag(matrix), 0)
    assert ((0 <= matrix) & (matrix <= 1)).all() and len(chart.data) == 16
    assert list(chart.figure.data[0].x) == result.layers


def test_two_layers_side_by_side_and_their_difference(result):
    chart = figures.layer_pair(result, 0, 3)
    first, second, difference = chart.figure.data
    assert (first.name, second.name) == ("embeddings", "block 2")
    assert np.allclose(difference.y, np.asarray(second.y) - np.asarray(first.y))
    assert list(chart.data.columns) == ["position", "word", "category", "share_pct_embeddings",
                                        "share_pct_block 2", "difference_pct"]


@pytest.mark.parametrize("method", ["pca", "tsne"])
def test_token_maps_colour_every_token_by_its_group(result, method):
    chart = figures.projection(result, 2, method)
    assert len(chart.data) == len(result.tokens)
    assert list(chart.data.group) == token_groups(result)
    for trace in chart.figure.data:
        assert trace.marker.color == GROUPS[trace.name]
    shown = {token for trace in chart.figure.data if trace.customdata is not None for token in trace.customdata[:, 0]}
    assert "[CLS]" in shown and "block 1" in chart.figure.layout.title.text
    if method == "tsne":  # the perplexity used: the paper's 40, capped at (tokens − 1) / 3
        assert f"perplexity {min(40, (len(result.tokens) - 1) / 3):.3g}," in chart.figure.layout.title.text


def test_chart_data_downloads_as_csv_and_json(result):
    chart = figures.heatmap(result)
    rows = json.loads(chart.json())
    assert len(rows) == len(chart.data) and set(rows[0]) >= {"layer_label", "word", "share_pct", "rank", "category"}
    assert chart.csv().decode().splitlines()[0].startswith("layer,layer_label,position,word")


def test_answer_tables(result, tiny_bert):
    table = figures.nbest_table(result.answer)
    assert list(table["rank"]) == list(range(1, len(result.answer.nbest) + 1))
    assert table.probability.is_monotonic_decreasing
    markup = figures.nbest_html(result.answer)
    # the logits (and "no answer"'s score) share a column, the characters show on hover: five columns fit beside
    # the passage
    assert markup.count("<tr>") == len(table) + 1 and markup.count("<th ") == len(table.columns) - 3
    best = result.answer.nbest[0]
    assert f">{best.start_logit:.2f} / {best.end_logit:.2f}</td>" in markup
    assert f"characters {best.start_char}–{best.end_char}: " in markup
    facts = dict(zip(*figures.model_facts(tiny_bert).T.values))
    assert facts["architecture"] == "BertForQuestionAnswering" and facts["fingerprint"] == tiny_bert.fingerprint
    assert figures.card_scores({}).empty


@pytest.mark.skipif(not figures.image_export_available(), reason="kaleido or a local Chromium is missing")
def test_figures_export_as_svg_with_a_local_browser(result):
    assert figures.jsd(result).image("svg").lstrip().startswith(b"<svg")
