"""The answer panel of a model that may abstain: it says so plainly, with p(no answer) and the rejected span."""
from rcqa.figures.answer import answer_summary, nbest_html, nbest_table
from rcqa.types import Answer, Example, NoAnswer, Span

EXAMPLE = Example(id="x", passage="The fair opened in <May>.", question="When did it close?", is_impossible=True)
SPAN = Span("<May>", 19, 24, 5, 7, 0, 2.0, 1.5, 0.3)


def answer(chosen: bool) -> Answer:
    null = NoAnswer(score=5.0 if chosen else 3.0, probability=0.6 if chosen else 0.1, threshold=0.5, chosen=chosen,
                    window=0, best_span_score=3.5)
    return Answer(question=EXAMPLE.question, nbest=(SPAN,), n_windows=1, no_answer=null)


def test_an_abstention_is_said_plainly_with_the_null_probability_and_the_rejected_span_escaped():
    text = answer_summary(EXAMPLE, answer(True))
    assert "No answer: the model abstains" in text and "60%" in text
    assert "null score − best span score = 1.50, above the threshold 0.50" in text
    assert "“&lt;May&gt;” (probability 30%)" in text and "<May>" not in text
    assert "abstaining is right" in text


def test_an_answer_beside_a_possible_abstention_says_why_it_answered():
    text = answer_summary(EXAMPLE, answer(False))
    assert "&lt;May&gt;" in text and "could have said “no answer” (probability 10%)" in text
    assert "= -0.50 is not above the threshold 0.50" in text
    assert "must still point at a span" not in text  # that caveat is for models that cannot abstain


def test_the_nbest_table_lists_no_answer_at_its_rank():
    table = nbest_table(answer(True))
    assert table["answer"].tolist() == ["(no answer)", "<May>"] and table["rank"].tolist() == [1, 2]
    assert nbest_table(answer(False))["answer"].tolist() == ["<May>", "(no answer)"]
    assert "(no answer)" in nbest_html(answer(True))
