"""A long passage (issue 41.9) is shown in a box of bounded height, which says how long it is and where the
highlighted span starts; a short one is printed whole, as before."""
from rcqa.figures.answer import LONG_PASSAGE_WORDS, answer_passage
from rcqa.types import Answer, Example, Span


def passage_with_answer_at(word: int, words: int) -> tuple[Example, Answer]:
    """A passage of `words` words, "w" each but the answer "Ada" as its word number `word` (counted from 1)."""
    text = " ".join("Ada" if n == word else "w" for n in range(1, words + 1))
    start = 2 * (word - 1)  # every word before it is "w " (two characters)
    example = Example(id="long", passage=text, question="Who?")
    span = Span("Ada", start, start + 3, 5, 5, 0, 2.0, 1.5, 0.9)
    return example, Answer(question="Who?", nbest=(span,), n_windows=9)


def test_a_long_passage_scrolls_in_a_bounded_box_and_says_where_the_answer_is():
    example, answer = passage_with_answer_at(2_345, 3_000)
    shown = answer_passage(example, answer)
    assert "max-height: 24em; overflow-y: auto" in shown
    assert "A long passage (3,000 words, the highlighted span at word 2,345): scroll in its box to read it." in shown


def test_a_passage_up_to_the_limit_is_printed_whole():
    example, answer = passage_with_answer_at(10, LONG_PASSAGE_WORDS)
    shown = answer_passage(example, answer)
    assert "max-height" not in shown and "A long passage" not in shown
