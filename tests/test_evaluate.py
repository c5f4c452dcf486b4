"""The SQuAD v1.1 metric against cases computed by hand."""
import pytest

from rcqa.evaluate import evaluate, exact_match, f1, normalize_answer, score
from rcqa.types import Example, GoldAnswer


def test_normalisation_drops_case_punctuation_articles_and_extra_spaces():
    assert normalize_answer("  The  Eiffel-Tower, in PARIS! ") == "eiffeltower in paris"
    assert normalize_answer("an apple a day") == "apple day"


def test_exact_match_after_normalisation():
    assert exact_match("the Morrow Hills", "Morrow hills.") == 1.0
    assert exact_match("Morrow", "Morrow Hills") == 0.0


def test_f1_by_hand():
    # prediction {morrow, hills, north}, gold {morrow, hills}: p = 2/3, r = 1, F1 = 0.8
    assert f1("Morrow Hills north", "the Morrow Hills") == pytest.approx(0.8)
    assert f1("salmon", "the Morrow Hills") == 0.0
    # repeated tokens count with multiplicity: common = min(2,1) + min(1,2) = 2, p = r = 2/3
    assert f1("x x y", "x y y") == pytest.approx(2 / 3)


def test_score_takes_the_max_over_gold_answers():
    assert score("2.4 million", ["2.4 million pounds", "2.4 million"]) == (1.0, 1.0)
    em, f = score("million pounds", ["2.4 million pounds", "cost"])
    assert em == 0.0 and f == pytest.approx(0.8)


def test_evaluate_reports_percentages_over_answerable_questions():
    def example(id, gold):
        return Example(id=id, passage="p", question="q", answers=tuple(GoldAnswer(g, 0) for g in gold),
                       is_impossible=not gold)
    examples = [example("1", ["Turin"]), example("2", ["four years"]), example("3", [])]
    predictions = {"1": "Turin", "2": "years", "3": "anything"}
    metrics = evaluate(examples, lambda e: predictions[e.id])
    assert metrics == {"exact_match": 50.0, "f1": pytest.approx(100 * (1 + 2 / 3) / 2), "n": 2}
