"""What the Explore page works out before it lays it out (rcqa.ui.explore): the span and foil choices it offers as
strings for the specs the View holds, and the sentence saying what an explanation explains."""
from rcqa.attribution.settings import FoilSpec, ExplainSettings, SpanSpec
from rcqa.types import Answer, NoAnswer, Span
from rcqa.ui.explore import explained, foil_choices, search_summary, span_choices, typed_foil, why_not_choices
from rcqa.ui.view import View
from tests.helpers.views import view_with

NAMED = [None, "runner-up", "gold", "null", "distractor-number"]


def test_the_views_own_span_and_foil_are_offered_beside_the_named_ones_in_their_string_forms():
    assert span_choices(View()) == ["predicted", "gold"]
    assert span_choices(view_with(span=SpanSpec("nbest", 3))) == ["predicted", "gold", "nbest:3"]
    assert foil_choices(View()) == NAMED
    assert foil_choices(view_with(contrast=FoilSpec("gold"))) == NAMED
    assert foil_choices(view_with(contrast=FoilSpec("text", text="a: b"))) == [*NAMED, "text:a: b"]


def test_only_a_typed_foil_fills_the_text_box():
    assert typed_foil(view_with(contrast=FoilSpec("text", text="3,750"))) == "3,750"
    assert typed_foil(view_with(contrast=FoilSpec("nbest", rank=2))) == typed_foil(View()) == ""


def test_what_is_explained_is_said_in_words():
    answered = Answer(question="Who?", nbest=(), n_windows=3)  # no "no answer" decoded: it answered
    assert explained(ExplainSettings(), answered) == "the answer"
    assert explained(ExplainSettings(contrast="nbest:1", windows="all"), answered) == \
        "why the answer and not the n-best span \\#2 over all 3 windows of the passage"  # markdown's # escaped
    assert explained(ExplainSettings(targets=("span_log_prob", "start_logit", "end_logit")), answered) == \
        "the answer, and its start and end logits apart"


def test_a_search_says_how_many_matched_and_how_many_are_listed():
    assert search_summary("dev.json", 10570, 1200, 1000) == \
        "1,200 of 10,570 questions in dev.json match; the first 1,000 are listed"
    assert search_summary("dev.json", 10570, 3, 3) == "3 of 10,570 questions in dev.json match"


def _span(text: str, start: int, window: int = 0) -> Span:
    return Span(text, start, start + len(text), 0, 0, window, 1.0, 1.0)


def test_why_not_never_offers_the_explained_span():
    answer, runner_up, other = _span("Margaret Ellison", 10), _span("Ellison", 19), _span("1847", 40)
    again = _span("Margaret Ellison", 10, window=1)  # the answer read in the next window too: the same span
    answered = Answer(question="Who?", nbest=(answer, runner_up, again, other), n_windows=2)
    assert why_not_choices(answered) == {1: "#2: Ellison", 3: "#4: 1847"}
    # abstained: "no answer" is what is explained, against each span, the best included
    abstained = Answer(question="Who?", nbest=(answer, other), n_windows=1,
                       no_answer=NoAnswer(score=5.0, probability=0.9, threshold=0.0, chosen=True, best_span_score=2.0))
    assert why_not_choices(abstained) == {0: "#1: Margaret Ellison", 1: "#2: 1847"}


def test_side_by_side_first_compares_with_the_gold_span_only_where_the_model_missed_it():
    from rcqa.gallery import gallery_example
    from rcqa.ui.explore import first_versus

    example = gallery_example("lighthouse-who")  # gold: Margaret Ellison
    right = Answer(question=example.question, nbest=(_span("Margaret Ellison", 63),), n_windows=1)
    wrong = Answer(question=example.question, nbest=(_span("Thomas Reid", 380),), n_windows=1)
    assert first_versus(example, right) == "foil"  # the gold span would be A again: the runner-up draws something
    assert first_versus(example, wrong) == "gold"
    assert first_versus(gallery_example("library-unanswerable"), wrong) == "foil"  # no gold to compare with
