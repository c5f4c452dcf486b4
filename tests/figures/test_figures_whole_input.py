"""The whole input: [CLS], the question and [SEP] beside the passage, a long passage's overview block by block (its
title naming what it covers, no block a sliver, no label over another: issue 61), and the start and end attributions
apart, on results built by hand."""
import html
import itertools
from dataclasses import replace

import numpy as np
import pytest
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures import heatmap
from rcqa.figures.whole_input import FITTED_WIDTH, SCALE_PX, overview_table, passage_overview, start_end
from rcqa.figures.words import PAGE_WORDS
from rcqa.gallery import gallery_example
from tests.helpers.handmade import handmade

QUESTION = [("When", "WRB"), ("built", "VBN"), ("?", ".")]


def built(scores_per_word: list[float], cls: float = 0.0):
    """One layer; the passage words w0 w1 ... score as given, [CLS] scores `cls`."""
    passage = [(f"w{i}", "NN", [score]) for i, score in enumerate(scores_per_word)]
    result = handmade(QUESTION, passage, explained=(0, 0))
    result.scores[:, :, :, 0] = cls  # [CLS] is token 0
    return result


def test_the_heatmap_shows_cls_the_question_and_sep_beside_the_passage_in_reading_order():
    result = built([1.0, 3.0], cls=4.0)
    result.scores[:, :, :, 1] = 2.0  # the question's first word, "When"
    chart = heatmap(result, include_question=True, include_special=True)
    labels = chart.data.word.tolist()
    assert labels == ["[CLS]", "When", "built", "[SEP]", "w0", "w1", "[SEP]"]  # the question mark is no word
    # shares of the whole input: [CLS] 4, When 2, w0 1, w1 3 out of 10
    assert chart.data.share_pct.tolist() == pytest.approx([40, 20, 0, 0, 10, 30, 0])
    assert chart.data.category.tolist()[0] == "special" and chart.data.category.tolist()[4] == "answer"
    assert "with [CLS] and [SEP]" in chart.figure.layout.xaxis.title.text.replace("<br>", " ")
    # without them the passage alone is the paper's distribution
    assert heatmap(result).data.share_pct.tolist() == pytest.approx([25, 75])


def test_the_overview_gives_each_blocks_share_and_its_top_words():
    result = built([1, 0, 2, 4, 0, 3, 0])  # 7 words in blocks of at most 3: three blocks, w0-w2, w3-w4, w5-w6
    table = overview_table(result, k=2, page_words=3)
    assert table.share_pct.tolist() == pytest.approx([30, 40, 30])  # (1 + 0 + 2), (4 + 0), (3 + 0) out of 10
    assert table.top_words.tolist() == ["w2 (20.0%), w0 (10.0%)", "w3 (40.0%)", "w5 (30.0%)"]
    assert (table.first_word.tolist(), table.last_word.tolist()) == ([1, 4, 6], [3, 5, 7])
    chart = passage_overview(result, k=2, page_words=3)
    assert list(chart.figure.data[0].x) == ["words 1–3", "words 4–5", "words 6–7"]  # not 4–6 and a 7–7 sliver
    assert np.allclose(np.asarray(chart.figure.data[0].z, dtype=float), [[30, 40, 30]])


def test_start_and_end_apart_only_where_the_result_holds_both():
    result = built([1.0, 3.0])
    assert start_end(result) is None  # one target: nothing to split, nothing recomputed
    # add an end target: the start scores w0 1, w1 3; the end scores w0 3, w1 1
    result.targets = [replace(result.targets[0], name="start_logit"), replace(result.targets[0], name="end_logit")]
    end = result.scores[0].copy()
    end[:, :, [-3, -2]] = end[:, :, [-2, -3]]  # the passage words' tokens, just before the last [SEP]
    result.scores = np.stack([result.scores[0], end])
    chart = start_end(result)
    assert chart.data.start_share_pct.tolist() == pytest.approx([25, 75])
    assert chart.data.end_share_pct.tolist() == pytest.approx([75, 25])
    assert chart.data.joined_share_pct.tolist() == pytest.approx([50, 50])  # 4 and 4
    assert [annotation.text for annotation in chart.figure.layout.annotations][:2] == ["Start logit", "End logit"]


def test_a_long_heatmap_with_the_special_tokens_opens_on_cls():
    result = built([1.0] * 70 + [5.0] * 10)  # 80 passage words: paged; the explained span is word 0 anyway
    result.targets[0] = replace(result.targets[0], start_token=75, end_token=75)  # explain a word far on
    assert heatmap(result).figure.layout.xaxis.range[0] > 0  # the passage alone opens near the span
    assert heatmap(result, include_question=True, include_special=True).figure.layout.xaxis.range[0] == -0.5


def long_result(words: int, layers: int = 7, seed: int = 0):
    """A handmade result over the first `words` words of the canal passage (repeated as it needs), real words with
    scores drawn at random (seeded), both signs, over `layers` layers, as an embedded MiniLM has."""
    passage = gallery_example("canal-long").passage.split()
    text = (passage * (words // len(passage) + 1))[:words]
    scores = np.random.default_rng(seed).normal(size=(words, layers)) * np.random.default_rng(seed + 1).pareto(
        1.5, size=(words, 1))  # a few words dominate, as in a real explanation
    return handmade(QUESTION, [(word, "NN", list(row)) for word, row in zip(text, scores)], explained=(10, 11),
                    passage_text=" ".join(text))


@pytest.mark.parametrize("windows", [2, 10])
def test_an_overview_of_one_window_says_so_and_one_of_every_window_says_whole_passage(windows):
    result = replace(long_result(301), window=windows - 2)  # the next-to-last window of the passage
    result = replace(result, answer=replace(result.answer, n_windows=windows))
    title = passage_overview(result).figure.layout.title.text
    assert title.startswith(f"Window {windows - 1} of {windows} at a glance")
    whole = replace(result, settings=replace(result.settings, windows="all"))
    assert passage_overview(whole).figure.layout.title.text.startswith("The whole passage at a glance")
    alone = replace(result, answer=replace(result.answer, n_windows=1), window=0)
    assert passage_overview(alone).figure.layout.title.text.startswith("The whole passage at a glance")


def test_a_real_window_of_a_long_passage_is_named_in_its_overview_title(tiny_bert):
    result = explain(tiny_bert, gallery_example("canal-long"), ExplainSettings(steps=2, tolerance=None))
    assert result.answer.n_windows > 1  # else this tests nothing
    title = passage_overview(result).figure.layout.title.text
    assert title.startswith(f"Window {result.window + 1} of {result.answer.n_windows} at a glance")


def test_the_overview_never_ends_on_a_sliver_of_a_block():
    chart = passage_overview(long_result(301))  # 301 words: seven blocks of 43, not six of 50 and "words 301–301"
    assert list(chart.figure.data[0].x) == ["words 1–43", "words 44–86", "words 87–129", "words 130–172",
                                            "words 173–215", "words 216–258", "words 259–301"]
    for words in (61, 119, 121, 180, 181, 1956):
        sizes = [last - first + 1 for first, last in
                 passage_overview(long_result(words)).data.query("layer == 0")[["first_word", "last_word"]].to_numpy()]
        assert sum(sizes) == words and max(sizes) <= PAGE_WORDS and max(sizes) - min(sizes) <= 1


def drawn_label_boxes(figure, width: int) -> list[tuple[float, float, float, float]]:
    """Each drawn cell label's box (left, top, right, bottom; px) on a chart `width` wide: centred in its cell, as
    wide as its widest line in DejaVu Sans (the font Chromium draws Plotly's in here), 1.3 lines a line high."""
    trace, layout = figure.data[0], figure.layout
    text = np.asarray(trace.text, dtype=object)
    rows, columns = text.shape
    size = trace.textfont.size
    left, top = layout.margin.l, layout.margin.t
    cell_width = (width - left - layout.margin.r - SCALE_PX) / columns
    cell_height = (layout.height - top - layout.margin.b) / rows
    font = FontProperties(family="DejaVu Sans", size=size)
    boxes = []
    for (row, column), label in np.ndenumerate(text):
        if not label:
            continue
        lines = html.unescape(label).split("<br>")
        wide = max(TextToPath().get_text_width_height_descent(line, font, ismath=False)[0] for line in lines)
        high = 1.3 * size * len(lines)
        x, y = left + (column + 0.5) * cell_width, top + (row + 0.5) * cell_height
        boxes.append((x - wide / 2, y - high / 2, x + wide / 2, y + high / 2))
    return boxes


@pytest.mark.parametrize("aggregation", ["l2", "sum"])
@pytest.mark.parametrize("words", [286, 500, 1956])  # five blocks, nine (narrow cells), 33 (none fits)
def test_no_two_overview_labels_overlap_and_none_leaves_the_chart(words, aggregation):
    figure = passage_overview(long_result(words), aggregation=aggregation).figure
    boxes = drawn_label_boxes(figure, FITTED_WIDTH)
    layout = figure.layout
    right, bottom = FITTED_WIDTH - layout.margin.r - SCALE_PX, layout.height - layout.margin.b
    assert all(left >= layout.margin.l and top >= layout.margin.t and r <= right and b <= bottom
               for left, top, r, b in boxes)
    for first, second in itertools.combinations(boxes, 2):
        assert first[2] <= second[0] or second[2] <= first[0] or first[3] <= second[1] or second[3] <= first[1]
    if words == 286:  # five blocks: there is room for labels, and they are drawn
        assert len(boxes) >= 7 * 5 // 2
