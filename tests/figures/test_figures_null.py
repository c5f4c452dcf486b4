"""The answer panel of a model that may abstain: it says so plainly, with p(no answer) and the rejected span."""
import dataclasses

from rcqa.figures.answer import answer_summary, nbest_html, nbest_table
from rcqa.types import Answer, Example, ExplainSettings, NoAnswer, Span

EXAMPLE = Example(id="x", passage="The fair opened in <May>.", question="When did it close?", is_impossible=True)
SPAN = Span("<May>", 19, 24, 5, 7, 0, 2.0, 1.5, 0.3)


def answer(chosen: bool) -> Answer:
    null = NoAnswer(score=5.0 if chosen else 3.0, probability=0.6 if chosen else 0.1, threshold=0.5, chosen=chosen,
                    window=0, best_span_score=3.5)
    return Answer(question=EXAMPLE.question, nbest=(SPAN,), n_windows=1, no_answer=null)


def test_an_abstention_is_said_plainly_with_the_null_probability_and_the_rejected_span_escaped():
    text = answer_summary(EXAMPLE, answer(True))
    assert "No answer: the model abstains" in text and "60%" in text
    assert "null score − best span score = 5.00 − 3.50 = +1.50, above the threshold +0.50, so the model abstains" in text
    assert "“&lt;May&gt;” (probability 30%)" in text and "<May>" not in text
    assert "abstaining is right" in text


def test_an_answer_beside_a_possible_abstention_says_why_it_answered():
    text = answer_summary(EXAMPLE, answer(False))
    assert "&lt;May&gt;" in text and "could have said “no answer” (probability 10%)" in text
    assert "= -0.50, not above the threshold +0.50, so the model answers" in text
    assert "must still point at a span" not in text  # that caveat is for models that cannot abstain


def test_the_nbest_table_lists_no_answer_at_its_rank():
    table = nbest_table(answer(True))
    assert table["answer"].tolist() == ["(no answer)", "<May>"] and table["rank"].tolist() == [1, 2]
    assert nbest_table(answer(False))["answer"].tolist() == ["<May>", "(no answer)"]
    assert "(no answer)" in nbest_html(answer(True))


def test_the_model_card_table_shows_v2_scores_in_their_parts_and_each_kind_apart():
    from rcqa.figures import card_scores

    card = {"squad_v1.1_dev": {"exact_match": 70.0, "f1": 79.5, "n": 10570, "answers": "forced"},
            "squad_v2style_dev": {"exact": 66.0, "f1": 70.0, "total": 15855, "HasAns_exact": 60.0, "HasAns_f1": 72.0,
                                  "HasAns_total": 10570, "NoAns_exact": 78.0, "NoAns_f1": 78.0, "NoAns_total": 5285,
                                  "by_kind": {"in_context": {"exact": 64.0, "f1": 68.5, "total": 13212}}},
            "no_answer": {"threshold": -1.2}}
    rows = card_scores(card).to_dict("records")
    assert rows == [
        {"evaluated on": "squad_v1.1_dev (answers forced)", "exact match": 70.0, "F1": 79.5, "questions": 10570},
        {"evaluated on": "squad_v2style_dev", "exact match": 66.0, "F1": 70.0, "questions": 15855},
        {"evaluated on": "squad_v2style_dev: HasAns", "exact match": 60.0, "F1": 72.0, "questions": 10570},
        {"evaluated on": "squad_v2style_dev: NoAns", "exact match": 78.0, "F1": 78.0, "questions": 5285},
        {"evaluated on": "squad_v2style_dev: answerable + in-context negatives", "exact match": 64.0, "F1": 68.5,
         "questions": 13212}]


def test_the_model_facts_say_whether_and_at_which_threshold_the_model_abstains(abstaining_tiny_dir, tiny_bert):
    from rcqa.figures import model_facts
    from rcqa.model import load_model

    def no_answer(qa_model):
        table = model_facts(qa_model)
        return dict(zip(table.property, table.value))["no answer"]

    assert no_answer(load_model(abstaining_tiny_dir)).startswith("allowed by default")
    assert "> -1000000000.000" in no_answer(load_model(abstaining_tiny_dir))
    assert no_answer(tiny_bert).startswith("not allowed by default")


def test_a_certain_abstention_reads_100_percent_and_the_highlight_says_the_span_was_rejected():
    from rcqa.figures.answer import answer_passage

    certain = Answer(question=EXAMPLE.question, nbest=(SPAN,), n_windows=1,
                     no_answer=NoAnswer(score=9.0, probability=1.0, threshold=0.5, chosen=True, window=0,
                                        best_span_score=3.5))
    assert "probability of “no answer” 100%" in answer_summary(EXAMPLE, certain).replace("\n", " ")
    assert "1e+02" not in answer_summary(EXAMPLE, certain) + nbest_html(certain)
    assert "Highlighted: the best span, which the model rejected" in answer_passage(EXAMPLE, certain)
    assert "Highlighted: the model's answer" in answer_passage(EXAMPLE, answer(False))


def test_what_decides_an_abstention_is_said_with_the_null_and_best_span_scores_against_the_threshold():
    # the case: the span's margin over [CLS] is positive (+1.74) and still the model abstains, because
    # null − best = −1.74 is above the threshold −1.79
    null = NoAnswer(score=1.0, probability=0.3, threshold=-1.79, chosen=True, window=0, best_span_score=2.74)
    abstained = Answer(question=EXAMPLE.question, nbest=(SPAN,), n_windows=1, no_answer=null)
    text = answer_summary(EXAMPLE, abstained)
    assert "null score − best span score = 1.00 − 2.74 = -1.74, above the threshold -1.79, so the model abstains" in text
    # the same sentence follows the numbers: a threshold of −1.70 makes the model answer
    answered = Answer(question=EXAMPLE.question, nbest=(SPAN,), n_windows=1,
                      no_answer=NoAnswer(1.0, 0.3, -1.70, False, 0, 2.74))
    assert "= -1.74, not above the threshold -1.70, so the model answers" in answer_summary(EXAMPLE, answered)


def test_a_null_targets_heatmap_subtitle_says_what_decides_with_the_numbers():
    from rcqa.figures import heatmap
    from tests.helpers.handmade import handmade

    result = handmade([("When", "WRB")], [("in", "IN", [1, 1]), ("May", "NNP", [2, 3])], explained=(1, 1))
    result.targets[0] = dataclasses.replace(result.targets[0], name="answer_vs_null")
    result.settings = ExplainSettings(baseline="pad", rule="gausslegendre")
    for threshold, verdict in ((-1.79, "above the threshold -1.79, so the model abstains"),
                               (0.0, "not above the threshold +0.00, so the model answers")):
        result.answer = Answer(question="When", nbest=result.answer.nbest, n_windows=1,
                               no_answer=NoAnswer(1.0, 0.3, threshold, threshold < -1.74, 0, 2.74))
        subtitle = heatmap(result).figure.layout.title.subtitle.text
        assert verdict in subtitle and "(> 0: the span wins)" not in subtitle


def test_no_answers_row_shows_its_score_at_cls_never_nan():
    # "no answer" scores 5.00, its start and end logits at [CLS] summed; the span's own logits are 2.00 / 1.50
    markup = nbest_html(answer(True))
    assert ">5.00 (sum at [CLS])</td>" in markup and ">2.00 / 1.50</td>" in markup
    assert "nan" not in markup.lower()
    assert nbest_table(answer(True))["null score"].tolist()[0] == 5.0


def test_an_abstention_advises_a_null_target_only_where_another_is_in_force():
    advice = "choose the target <em>null</em> or <em>answer_vs_null</em>"
    assert advice in answer_summary(EXAMPLE, answer(True), "span_log_prob")
    for target in ("null", "answer_vs_null"):  # already explaining the abstention: nothing to choose
        text = answer_summary(EXAMPLE, answer(True), target)
        assert advice not in text and "The best span it rejected: “&lt;May&gt;” (probability 30%)." in text

