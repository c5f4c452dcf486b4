"""A long passage opens at its answer, counted in the words every page counts; a passage of one 20,000-character
word and its answer stay bounded on the page (issue 61, findings 11 and 12)."""
import re

import plotly.graph_objects as go

from rcqa.figures.answer import ANSWER_CHARS, CONTEXT_CHARS, answer_passage, answer_summary
from rcqa.figures.words import PAGE_WORDS, page_axis
from rcqa.types import Answer, Example, Span


def answered(passage: str, start: int, text: str) -> tuple[Example, Answer]:
    """The passage with the model's answer `text` at character `start` (window, tokens and logits are not read)."""
    assert passage[start:start + len(text)] == text
    span = Span(text, start, start + len(text), 5, 5, 0, 2.0, 1.5, 0.9)
    return Example(id="odd", passage=passage, question="Who?"), Answer(question="Who?", nbest=(span,), n_windows=9)


def folded_and_shown(html: str) -> tuple[str, str]:
    """The text folded above a long passage's box (its <details>), and the text the box opens on."""
    found = re.search(r"<details>(.*?)</details>(.*?)</div>", html, re.S)
    assert found, "the passage opened at its first word"
    return found.group(1), found.group(2)


def test_a_long_passage_opens_at_its_answer_with_the_words_before_folded_above():
    # "w " × 2,344, then the answer: it starts at character 4,688; the first space at or after 4,688 - 300 = 4,388
    # is character 4,389, so the box opens at 4,390 on word 2,196, with the 2,195 words before it folded
    example, answer = answered(" ".join("Ada" if n == 2_345 else "w" for n in range(1, 3_001)), 4_688, "Ada")
    html = answer_passage(example, answer)
    folded, shown = folded_and_shown(html)
    assert "The passage's first 2,195 words, before the answer: click to show them" in folded
    assert shown.startswith("w w w") and shown.index("<mark") == 4_688 - 4_390  # the answer, 298 characters in
    assert "(3,000 words, the highlighted span at word 2,345)" in html and "It opens at the span" in html


def test_it_opens_where_the_answers_paragraph_starts_when_that_is_near():
    paragraph = "\n\nThe canal was sold to the railway in 1852."
    passage = "w " * 1_000 + paragraph.rstrip()
    start = passage.index("1852")
    assert start - passage.index("The canal") <= CONTEXT_CHARS
    _, shown = folded_and_shown(answer_passage(*answered(passage, start, "1852")))
    assert shown.startswith("The canal was sold")


def test_a_long_passage_whose_answer_is_in_view_opens_at_its_first_word():
    example, answer = answered(" ".join("Ada" if n == 100 else "w" for n in range(1, 3_001)), 198, "Ada")
    html = answer_passage(example, answer)
    assert "max-height: 24em" in html and "<details" not in html


def test_the_word_count_is_the_pages_words_as_written_not_whitespace():
    # each sentence: 6 pieces between spaces, 8 words as written (Ada 's well known canal is n't it), 3 marks
    sentence = "Ada's well-known canal, isn't it? "
    example, answer = answered(sentence * 50, 34 * 49, "Ada")
    assert "A long passage (400 words, the highlighted span at word 393)" in answer_passage(example, answer)


def test_a_one_word_passage_of_20000_characters_stays_in_its_box_and_wraps():
    word = "x" * 20_000
    example, answer = answered(word, 0, word)
    html = answer_passage(example, answer)
    assert "max-height: 24em; overflow-y: auto" in html and "overflow-wrap: anywhere" in html
    assert "A long passage (1 word, the highlighted span at word 1)" in html
    summary = answer_summary(example, answer)
    headline = re.search(r'<div style="[^"]*">(.*?)</div>', summary).group(1)
    assert headline == "x" * (ANSWER_CHARS - 1) + "… (20,000 characters)"


def test_a_short_answer_is_its_headline_whole():
    example, answer = answered("The lighthouse was designed by Ada Merrow.", 31, "Ada Merrow")
    assert '">Ada Merrow</div>' in answer_summary(example, answer)


def test_the_paged_heatmap_opens_with_the_answer_in_view():
    figure = go.Figure()
    page_axis(figure, [f"w{n}" for n in range(1_968)], around=1_458)
    low, high = figure.layout.xaxis.range
    first = 1_458 - PAGE_WORDS // 4  # a quarter page of words before the answer's column is the first shown
    assert (low, high) == (first - 0.5, first + PAGE_WORDS - 0.5) and low < 1_458 < high
