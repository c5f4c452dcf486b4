"""Issue 41: every word axis shows the whole passage or says how much it shows, with a way to move; a passage of two
pages gets no overview; the side-by-side difference of two equal explanations draws no scale of float noise."""
import re

import numpy as np
import pytest

from rcqa.analysis.pair import compare
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures import heatmap
from rcqa.figures.pair import pair_heatmaps
from rcqa.figures.whole_input import needs_overview
from rcqa.figures.words import PAGE_WORDS
from rcqa.gallery import gallery_example
from rcqa.text import written_words
from rcqa.figures.common import axis_words


@pytest.fixture(scope="module")
def orchard(tiny_bert):
    return explain(tiny_bert, gallery_example("orchard-how-many"), ExplainSettings(steps=4))


@pytest.fixture(scope="module")
def orchard_words(orchard) -> list[str]:
    """The orchard passage's words, counted apart from the figures: every written word but punctuation."""
    return [word.text for word in written_words(orchard.example.passage) if not word.is_punctuation]


def shown_range(axis) -> tuple[int, int]:
    """The first and last word position an x axis shows."""
    low, high = axis.range
    return int(np.ceil(low)), int(np.floor(high))


def test_the_orchard_heatmap_opens_on_its_first_word_and_says_how_much_it_shows(orchard, orchard_words):
    assert len(orchard_words) == 69  # more than a page
    figure = heatmap(orchard).figure
    first, last = shown_range(figure.layout.xaxis)
    assert (first, last) == (0, PAGE_WORDS - 1)  # the answer, word 23, is on the first page: it opens there
    assert figure.layout.xaxis.rangeslider.visible
    assert f"{PAGE_WORDS} of its {len(orchard_words)} words at a time" in figure.layout.xaxis.title.text.replace("<br>", " ")


def test_the_side_by_side_word_axis_pages_the_whole_passage_and_says_so(orchard, orchard_words):
    figure = pair_heatmaps(compare(orchard, orchard)).figure
    bottom = figure.layout.xaxis3
    assert axis_words(bottom) == orchard_words  # every word is on the axis, in order
    assert bottom.rangeslider.visible and shown_range(bottom) == (0, PAGE_WORDS - 1)
    assert re.search(rf"{PAGE_WORDS} of its {len(orchard_words)} words at a time: drag the slider", bottom.title.text.replace("<br>", " "))


def test_equal_explanations_draw_no_difference_scale(orchard):
    figure = pair_heatmaps(compare(orchard, orchard)).figure
    difference = figure.data[2]
    assert np.nanmax(np.abs(np.asarray(difference.z, dtype=float))) < 1e-9  # A − A is zero, or float noise
    assert difference.showscale is False  # no "−500n … 500n" scale
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert any(title.startswith("B − A: none") for title in titles)


def test_a_passage_of_two_pages_gets_no_overview_and_one_of_three_does():
    assert not needs_overview(69) and not needs_overview(2 * PAGE_WORDS)
    assert needs_overview(2 * PAGE_WORDS + 1) and needs_overview(1000)
