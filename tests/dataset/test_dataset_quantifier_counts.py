"""The quantifier questions a run has and those its chart draws (only where the passage holds two or more numbers,
the ratio's denominator): the legend and the sentence beside it say both, on numbers counted by hand."""
import pytest

from rcqa.dataset import figures
from rcqa.dataset.aggregate import load_run, summarize
from tests.helpers.hand_runs import HAND_ROWS, row, write_run

# a "how many" question over a passage with one number: a quantifier question without a ratio
NO_RATIO = row("d", question_type="how many", quantifier=True, quantifier_share=None)


def quantifier_line(summary) -> str:
    figure = figures.quantifier_by_depth({"hand": summary}).figure
    assert figure is not None
    (line,) = [t.name for t in figure.data if t.mode == "lines+markers"]
    return line


@pytest.mark.parametrize("rows, legend, sentence", [
    (HAND_ROWS, "hand (1 questions)", "1 quantifier question, all drawn."),  # b alone, with its ratio
    ([*HAND_ROWS, NO_RATIO], "hand (1 of 2 questions)",
     "2 quantifier questions; 1 with two or more numbers in the passage are drawn (the ratio is undefined for the "
     "other 1)."),
])
def test_the_legend_and_the_sentence_count_the_questions_drawn_among_those_asked(tmp_path, rows, legend, sentence):
    summary = summarize(load_run(write_run(tmp_path / "hand", rows)))
    assert quantifier_line(summary) == legend
    assert figures.quantifier_counts(summary.quantifier) == sentence
