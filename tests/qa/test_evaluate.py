"""The SQuAD v1.1 and v2.0 metrics and the abstention curve, against cases computed by hand."""
from dataclasses import replace

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


# SQuAD v2.0: four questions worked out by hand from the official evaluate-v2.0.py's definitions
# (compute_exact, compute_f1, apply_no_ans_threshold, find_best_thresh).
V2_GOLDS = {"q1": ["Denver Broncos"], "q2": ["the Eiffel Tower", "Eiffel"], "q3": [], "q4": []}
V2_PREDICTIONS = {"q1": "Denver Broncos", "q2": "Eiffel Tower in Paris", "q3": "1999", "q4": "blue"}
V2_ODDS = {"q1": -2.0, "q2": -1.5, "q3": 3.0, "q4": -1.0}


def test_v2_metrics_at_a_threshold_by_hand():
    from rcqa.evaluate import squad_v2_metrics

    metrics = squad_v2_metrics(V2_GOLDS, V2_PREDICTIONS, V2_ODDS, threshold=0.0)
    # only q3 (odds 3 > 0) abstains. q1: EM 1, F1 1. q2: EM 0; F1 vs "eiffel tower": p = 2/4, r = 1 → 2/3,
    # vs "eiffel": p = 1/4, r = 1 → 0.4; max 2/3. q3: abstains and has no answer: 1. q4: "blue" against
    # the gold "": no tokens on one side only → 0.
    assert metrics["exact"] == pytest.approx(50.0) and metrics["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1) / 4)
    assert metrics["HasAns_exact"] == pytest.approx(50.0) and metrics["HasAns_f1"] == pytest.approx(100 * (5 / 3) / 2)
    assert metrics["NoAns_exact"] == metrics["NoAns_f1"] == pytest.approx(50.0)
    assert (metrics["total"], metrics["HasAns_total"], metrics["NoAns_total"]) == (4, 2, 2)


def test_v2_best_thresholds_by_hand():
    from rcqa.evaluate import squad_v2_metrics

    metrics = squad_v2_metrics(V2_GOLDS, V2_PREDICTIONS, V2_ODDS)
    # find_best_thresh starts from "abstain everywhere": 2 (the two unanswerables). In the order of the odds:
    # q1 (−2) +1 → 3, best, thresh −2; q2 (−1.5) F1 +2/3 → 3.67, best, thresh −1.5 (EM +0: no new best);
    # q4 (−1) a non-empty answer to an unanswerable −1; q3 (3) −1.
    assert metrics["best_f1"] == pytest.approx(100 * (3 + 2 / 3) / 4) and metrics["best_f1_thresh"] == -1.5
    assert metrics["best_exact"] == pytest.approx(75.0) and metrics["best_exact_thresh"] == -2.0
    # the default threshold (inf, the script's without --na-prob-thresh past every odds) answers everywhere
    assert metrics["exact"] == pytest.approx(25.0) and metrics["NoAns_exact"] == 0.0


def test_v2_an_empty_prediction_of_an_unanswerable_is_right_and_empty_golds_are_dropped():
    from rcqa.evaluate import squad_v2_metrics

    metrics = squad_v2_metrics({"a": [], "b": ["", "Paris"]}, {"a": "", "b": "Paris"}, {"a": -5.0, "b": -5.0})
    assert metrics["exact"] == metrics["f1"] == 100.0
    # find_best_thresh: start 1 (a); a: an empty prediction adds 0; b +1 → 2 at its odds
    assert metrics["best_exact"] == 100.0 and metrics["best_exact_thresh"] == -5.0


def test_evaluate_v2_reads_examples_and_applies_the_models_threshold():
    from rcqa.evaluate import evaluate_v2

    examples = [Example(id="x", passage="p", question="q", answers=(GoldAnswer("Paris", 0),)),
                Example(id="y", passage="p", question="q", is_impossible=True)]
    odds = {"x": 0.4, "y": 0.6}
    predict = lambda e: ("Paris", odds[e.id])  # noqa: E731
    assert evaluate_v2(examples, predict, threshold=0.5)["exact"] == 100.0  # x answers, y abstains
    assert evaluate_v2(examples, predict, threshold=0.3)["exact"] == 50.0  # both abstain
    assert evaluate_v2(examples, predict, threshold=None)["exact"] == 50.0  # never abstains


def test_evaluate_v2_by_kind_keeps_every_answerable_with_each_kinds_unanswerables():
    from rcqa.evaluate import evaluate_v2

    examples = [Example(id="x", passage="p", question="q", answers=(GoldAnswer("Paris", 0),)),
                Example(id="y-neg-ctx", passage="p", question="q", is_impossible=True),
                Example(id="z-neg-other", passage="p", question="q", is_impossible=True)]
    odds = {"x": -1.0, "y-neg-ctx": 1.0, "z-neg-other": -1.0}  # at threshold 0: x answers, y abstains, z answers
    metrics = evaluate_v2(examples, lambda e: ("Paris", odds[e.id]), threshold=0.0,
                          group=lambda e: e.id.split("-neg-")[1] if "-neg-" in e.id else None)
    assert metrics["exact"] == pytest.approx(200 / 3)
    assert metrics["by_kind"]["ctx"]["exact"] == 100.0 and metrics["by_kind"]["ctx"]["total"] == 2
    assert metrics["by_kind"]["other"]["exact"] == 50.0 and metrics["by_kind"]["other"]["NoAns_exact"] == 0.0


def test_v2_odds_equal_to_the_threshold_answer_and_golds_empty_after_normalising_never_match():
    from rcqa.evaluate import squad_v2_metrics

    # at threshold −1.5 q2's odds tie: it answers (F1 2/3) and only q3 and q4 abstain, both rightly
    assert squad_v2_metrics(V2_GOLDS, V2_PREDICTIONS, V2_ODDS, threshold=-1.5)["f1"] == pytest.approx(
        100 * (1 + 2 / 3 + 1 + 1) / 4)
    # " . " normalises to nothing, so it is dropped: the empty prediction matches only an unanswerable's ""
    metrics = squad_v2_metrics({"c": [" . ", "Paris"]}, {"c": ""}, {"c": -1.0})
    assert metrics["exact"] == metrics["f1"] == 0.0


def test_v2_best_threshold_counts_from_abstain_everywhere_in_the_order_of_the_odds():
    from rcqa.evaluate import evaluate_v2, squad_v2_metrics

    golds = {"n1": [], "h1": ["Paris"], "h2": ["Oslo"], "n2": [], "n3": []}
    predictions = {"n1": "Rome", "h1": "Paris", "h2": "Oslo", "n2": "", "n3": "Bern"}
    odds = {"n1": -3.0, "h1": -2.0, "h2": -1.0, "n2": 0.0, "n3": 2.0}
    # by hand: 3 unanswerables to start; n1 answered wrongly −1 → 2; h1 +1 → 3 (no new best); h2 +1 → 4, best, at
    # −1; n2's empty prediction costs nothing → 4; n3 −1 → 3. best = 4 / 5
    metrics = squad_v2_metrics(golds, predictions, odds)
    assert metrics["best_exact"] == pytest.approx(80.0) and metrics["best_exact_thresh"] == -1.0
    # where no odds ever beats "abstain everywhere", the script's threshold stays 0.0
    never = squad_v2_metrics({"a": [], "b": ["x"]}, {"a": "y", "b": "z"}, {"a": -1.0, "b": 1.0})
    assert never["best_f1"] == pytest.approx(50.0) and never["best_f1_thresh"] == 0.0
    # evaluate_v2's threshold defaults to 0, the card's default
    examples = [Example(id="h1", passage="p", question="q", answers=(GoldAnswer("Paris", 0),))]
    assert evaluate_v2(examples, lambda e: ("Paris", 0.5))["exact"] == 0.0


def test_a_question_without_gold_answers_scores_nothing_and_is_left_out_of_the_v1_percentages():
    assert score("Turin", []) == (0.0, 0.0)
    golds = {"1": ["Turin"], "2": ["four years"], "3": ["nine"]}
    predictions = {"1": "Turin", "2": "four years", "3": "eight", "4": "anything"}
    examples = [Example(id=i, passage="p", question="q", answers=(GoldAnswer(g[0], 0),)) for i, g in golds.items()]
    examples.append(Example(id="4", passage="p", question="q"))  # no gold, yet not marked impossible (a test set)
    # by hand: EM 2 of 3, F1 (1 + 1 + 0) / 3; the question without gold counts in neither
    assert evaluate(examples, lambda e: predictions[e.id]) == {
        "exact_match": pytest.approx(200 / 3), "f1": pytest.approx(200 / 3), "n": 3}
    assert evaluate([], lambda e: "") == {"exact_match": 0.0, "f1": 0.0, "n": 0}


def test_v2_best_threshold_skips_odds_of_questions_without_a_gold_entry():
    from rcqa.evaluate import squad_v2_metrics

    # find_best_thresh's `if qid not in scores: continue`: "extra", first in the order of the odds, has no gold
    # entry and is passed over; the rest is V2's hand-worked best_exact (75 at −2)
    metrics = squad_v2_metrics(V2_GOLDS, {**V2_PREDICTIONS, "extra": "x"}, {**V2_ODDS, "extra": -9.0})
    assert metrics["best_exact"] == pytest.approx(75.0) and metrics["best_exact_thresh"] == -2.0


def test_evaluate_v2_counts_an_unanswerable_question_unanswerable_whatever_answers_it_carries():
    from rcqa.evaluate import evaluate_v2

    # an impossible question with plausible answers kept: answering with one of them is still wrong
    examples = [Example(id="y", passage="p", question="q", answers=(GoldAnswer("Paris", 0),), is_impossible=True)]
    metrics = evaluate_v2(examples, lambda e: ("Paris", -1.0), threshold=0.0)
    assert metrics["exact"] == 0.0 and metrics["NoAns_total"] == 1


def _curve_case():
    """Two answerable questions (one right, one 2/3 right), an antonym, an entity swap whose odds tie an answerable
    one's, and a negation that is not counted."""
    examples = [Example(id="a1", passage="p", question="q", answers=(GoldAnswer("red", 0),)),
                Example(id="a2", passage="p", question="q", answers=(GoldAnswer("big dog", 0),)),
                Example(id="u1-neg-antonym", passage="p", question="q", is_impossible=True),
                Example(id="u2-neg-entity", passage="p", question="q", is_impossible=True),
                Example(id="u3-neg-not", passage="p", question="q", is_impossible=True)]
    predictions = {"a1": ("red", 0.5), "a2": ("dog", -1.0), "u1-neg-antonym": ("x", 2.0),
                   "u2-neg-entity": ("y", -1.0), "u3-neg-not": ("z", 3.0)}
    return examples, predictions


def test_the_abstention_curve_by_hand():
    from rcqa.evaluate import abstention_curve
    from rcqa.negatives import negative_kind

    examples, predictions = _curve_case()
    curve = abstention_curve(examples, predictions, ["antonym", "entity_swap"], lambda e: negative_kind(e.id))
    # thresholds: below every odds (abstain everywhere), then each distinct odds; odds equal to it answer
    assert [p["threshold"] for p in curve] == [-2.0, -1.0, 0.5, 2.0, 3.0]
    assert [p["abstained"] for p in curve] == [2, 1, 1, 0, 0]
    assert all(p["of"] == 2 for p in curve)  # the negation is not counted
    assert curve[0]["abstained_by_kind"] == {"antonym": 1, "entity_swap": 1}
    assert curve[1]["abstained_by_kind"] == {"antonym": 1, "entity_swap": 0}  # the tie at -1.0 answers
    # HasAns F1: a1 answers from 0.5 on (F1 1), a2 from -1.0 on (F1 2/3: "dog" against "big dog")
    assert [p["HasAns_f1"] for p in curve] == pytest.approx([0.0, 100 / 3, 250 / 3, 250 / 3, 250 / 3])


def test_the_abstention_curve_agrees_with_the_v2_metrics_at_each_of_its_thresholds():
    from rcqa.evaluate import abstention_curve, squad_v2_metrics
    from rcqa.negatives import negative_kind

    examples, predictions = _curve_case()
    golds = {e.id: [a.text for a in e.answers] for e in examples}
    texts, odds = {q: t for q, (t, _) in predictions.items()}, {q: o for q, (_, o) in predictions.items()}
    for point in abstention_curve(examples, predictions, ["antonym", "entity_swap"], lambda e: negative_kind(e.id)):
        counted = {q: g for q, g in golds.items() if q in ("a1", "a2", "u1-neg-antonym", "u2-neg-entity")}
        metrics = squad_v2_metrics(counted, texts, odds, point["threshold"])
        assert point["HasAns_f1"] == pytest.approx(metrics["HasAns_f1"])
        assert point["abstained"] == round(metrics["NoAns_exact"] * metrics["NoAns_total"] / 100)


def test_where_the_curve_stops_is_the_most_abstention_that_keeps_the_floor():
    from rcqa.evaluate import abstention_curve, best_abstention_above
    from rcqa.negatives import negative_kind

    examples, predictions = _curve_case()
    curve = abstention_curve(examples, predictions, ["antonym", "entity_swap"], lambda e: negative_kind(e.id))
    stop = best_abstention_above(curve, 80.0)
    assert (stop["threshold"], stop["abstained"]) == (0.5, 1)  # the one point at >= 80 that still abstains
    assert best_abstention_above(curve, 0.0)["abstained"] == 2  # abstaining everywhere keeps a floor of 0
    assert best_abstention_above(curve, 90.0) is None  # no threshold reaches 90: a2 is never wholly right


def _v2_examples():
    passage = "The red fox ran past the blue barn."
    return [Example("a1", passage, "What ran?", answers=(GoldAnswer("the red fox", 0),)),
            Example("n1", passage, "What flew?", is_impossible=True),
            Example("a2", passage, "Which barn?", answers=(GoldAnswer("blue barn", 25),)),
            Example("n2", passage, "Who swam?", is_impossible=True)]


def test_each_questions_f1_averages_to_the_official_v2_f1():
    from rcqa.evaluate import question_f1, squad_v2_metrics

    golds = {"a1": ["the red fox"], "n1": [], "a2": ["blue barn"], "n2": []}
    predictions = {"a1": "red fox", "n1": "barn", "a2": "barn", "n2": "fox"}
    odds = {"a1": -3.0, "n1": 1.0, "a2": 0.5, "n2": -1.0}
    # by hand at threshold 0: a1 answers "red fox" = gold without its article (1); n1 abstains (1); a2 abstains on
    # an answerable question (0); n2 answers a question that has none (0)
    assert question_f1(golds, predictions, odds, 0.0) == {"a1": 1.0, "n1": 1.0, "a2": 0.0, "n2": 0.0}
    # never abstaining: a2's "barn" against "blue barn" is p = 1, r = 1/2, F1 = 2/3
    assert question_f1(golds, predictions, odds) == {"a1": 1.0, "n1": 0.0, "a2": pytest.approx(2 / 3), "n2": 0.0}
    # odds equal to the threshold do not exceed it: a2 (0.5) is answered at 0.5, as the official script's > decides
    assert question_f1(golds, predictions, odds, 0.5)["a2"] == pytest.approx(2 / 3)
    for threshold in (0.0, float("inf"), -2.0):
        scored = question_f1(golds, predictions, odds, threshold)
        assert 100 * sum(scored.values()) / 4 == pytest.approx(squad_v2_metrics(golds, predictions, odds,
                                                                                threshold)["f1"])


def test_two_models_are_compared_question_by_question_each_at_its_own_threshold():
    from rcqa.evaluate import paired_v2_f1

    examples = _v2_examples()
    first = {"a1": ("red fox", -3.0), "n1": ("barn", 1.0), "a2": ("blue barn", -1.0), "n2": ("fox", 2.0)}
    second = {"a1": ("red fox", -3.0), "n1": ("barn", 1.0), "a2": ("blue barn", -1.0), "n2": ("fox", 2.0)}
    # the same readings: the first abstains on n1 and n2 at threshold 0, the second (threshold 1.5) on n2 alone;
    # per question 100·(1, 1, 1, 1) against 100·(1, 0, 1, 1): differences 0, 100, 0, 0
    found = paired_v2_f1(examples, first, 0.0, second, 1.5)
    assert (found["f1"], found["against_f1"]) == (100.0, 75.0)
    assert found["difference"]["mean"] == 25.0 and found["difference"]["n"] == 4
    # four questions, one of them different: a bootstrap resample can miss it, so 0 stays in the interval
    assert found["difference"]["low"] == 0.0 and not found["told_apart"]
    same = paired_v2_f1(examples, first, 0.0, first, 0.0)
    assert same["difference"] == {"mean": 0.0, "low": 0.0, "high": 0.0, "n": 4} and not same["told_apart"]
    # forty questions, the four ten times over; None never abstains, so every n scores 0 for the second
    many = [replace(e, id=f"{e.id}-{i}") for i in range(10) for e in examples]
    first_many, second_many = ({f"{q}-{i}": read[q] for i in range(10) for q in read} for read in (first, second))
    never = paired_v2_f1(many, first_many, 0.0, second_many, None)
    assert (never["f1"], never["against_f1"], never["difference"]["n"]) == (100.0, 50.0, 40)
    assert never["told_apart"] and never["difference"]["low"] > 0


def test_the_answerable_and_the_unanswerable_questions_are_compared_apart_as_the_official_hasans_and_noans_f1():
    from rcqa.evaluate import evaluate_v2, paired_v2_f1

    examples = _v2_examples()
    read = {"a1": ("red fox", -3.0), "n1": ("barn", 1.0), "a2": ("blue barn", -1.0), "n2": ("fox", 2.0)}
    # by hand, the same readings: at threshold 0 it abstains on n1 and n2 alone (every question right); at −2 on a2
    # as well (a2 wrong: HasAns 50, NoAns 100); never abstaining, n1 and n2 are wrong (HasAns 100, NoAns 0)
    lower = paired_v2_f1(examples, read, 0.0, read, -2.0)
    assert (lower["HasAns"]["HasAns_f1"], lower["HasAns"]["against_HasAns_f1"]) == (100.0, 50.0)
    assert lower["HasAns"]["difference"]["n"] == 2 and lower["HasAns"]["difference"]["mean"] == 50.0
    assert lower["NoAns"]["difference"] == {"mean": 0.0, "low": 0.0, "high": 0.0, "n": 2}
    never = paired_v2_f1(examples, read, 0.0, read, None)
    assert (never["NoAns"]["NoAns_f1"], never["NoAns"]["against_NoAns_f1"]) == (100.0, 0.0)
    assert never["NoAns"]["difference"]["low"] == 100.0 and never["NoAns"]["told_apart"]
    for found, threshold in ((lower, -2.0), (never, None)):
        for side in ("HasAns", "NoAns"):  # the official script's, for each model
            for cut, key in ((0.0, f"{side}_f1"), (threshold, f"against_{side}_f1")):
                official = evaluate_v2(examples, lambda e: read[e.id], cut)
                assert found[side][key] == pytest.approx(official[f"{side}_f1"])
    only_answerable = [e for e in examples if not e.is_impossible]
    assert not {"HasAns", "NoAns"} & set(paired_v2_f1(only_answerable, read, 0.0, read, None))


def test_each_kind_of_unanswerable_question_is_compared_on_its_own_questions_as_the_official_noans_f1():
    from rcqa.evaluate import evaluate_v2, paired_v2_f1
    from rcqa.negatives import negative_kind

    passage = "The red fox ran past the blue barn."
    examples = [Example("a1", passage, "What ran?", answers=(GoldAnswer("the red fox", 0),)),
                *(Example(f"q{i}-neg-antonym", passage, "What walked?", is_impossible=True) for i in range(3)),
                *(Example(f"q{i}-neg-entity", passage, "What ran past the red barn?", is_impossible=True)
                  for i in range(2))]
    # by hand at threshold 0: the first abstains on two antonyms of three and on both entity swaps, the second on
    # one antonym and no entity swap
    first = {"a1": ("red fox", -3.0), **{f"q{i}-neg-antonym": ("fox", odds) for i, odds in enumerate((1, 2, -1))},
             **{f"q{i}-neg-entity": ("barn", 4.0) for i in range(2)}}
    second = {"a1": ("red fox", -3.0), **{f"q{i}-neg-antonym": ("fox", odds) for i, odds in enumerate((1, -2, -1))},
              **{f"q{i}-neg-entity": ("barn", -4.0) for i in range(2)}}
    found = paired_v2_f1(examples, first, 0.0, second, 0.0, group=lambda e: negative_kind(e.id))
    assert set(found["by_kind"]) == {"antonym", "entity_swap"}
    antonyms, swaps = found["by_kind"]["antonym"], found["by_kind"]["entity_swap"]
    assert (antonyms["NoAns_f1"], antonyms["against_NoAns_f1"]) == (pytest.approx(200 / 3), pytest.approx(100 / 3))
    assert antonyms["difference"]["n"] == 3 and antonyms["difference"]["mean"] == pytest.approx(100 / 3)
    assert swaps["difference"] == {"mean": 100.0, "low": 100.0, "high": 100.0, "n": 2} and swaps["told_apart"]
    for kind, compared in found["by_kind"].items():  # the official script's NoAns F1 of each kind, for each model
        for read, key in ((first, "NoAns_f1"), (second, "against_NoAns_f1")):
            official = evaluate_v2(examples, lambda e: read[e.id], 0.0, group=lambda e: negative_kind(e.id))
            assert compared[key] == pytest.approx(official["by_kind"][kind]["NoAns_f1"])
    assert "by_kind" not in paired_v2_f1(examples, first, 0.0, second, 0.0)  # no group, no kinds


def test_an_interval_tells_apart_only_where_it_exists_and_zero_lies_outside_it():
    from rcqa.intervals import excludes_zero

    assert excludes_zero(0.97, 1.69) and excludes_zero(-0.9, -0.1)
    assert not excludes_zero(0.0, 1.0) and not excludes_zero(-1.0, 0.0)  # touching 0 is covering it
    assert not excludes_zero(-0.2, 1.0) and not excludes_zero(None, None) and not excludes_zero(0.5, None)
