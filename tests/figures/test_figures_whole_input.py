"""The whole input: [CLS], the question and [SEP] beside the passage, a long passage's overview page by page, and the
start and end attributions apart, on results built by hand."""
from dataclasses import replace

import numpy as np
import pytest

from rcqa.figures import heatmap
from rcqa.figures.whole_input import overview_table, passage_overview, start_end
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
    assert "with [CLS] and [SEP]" in chart.figure.layout.xaxis.title.text
    # without them the passage alone is the paper's distribution
    assert heatmap(result).data.share_pct.tolist() == pytest.approx([25, 75])


def test_the_overview_gives_each_pages_share_and_its_top_words():
    result = built([1, 0, 2, 4, 0, 3, 0])  # 7 words; pages of 3: w0-w2, w3-w5, w6
    table = overview_table(result, k=2, page_words=3)
    assert table.share_pct.tolist() == pytest.approx([30, 70, 0])  # (1 + 2), (4 + 3), 0 out of 10
    assert table.top_words.tolist() == ["w2 (20.0%), w0 (10.0%)", "w3 (40.0%), w5 (30.0%)", ""]
    assert (table.first_word.tolist(), table.last_word.tolist()) == ([1, 4, 7], [3, 6, 7])
    chart = passage_overview(result, k=2, page_words=3)
    assert list(chart.figure.data[0].x) == ["words 1–3", "words 4–6", "words 7–7"]
    assert np.allclose(np.asarray(chart.figure.data[0].z, dtype=float), [[30, 70, 0]])


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
