"""The embedded default model: it answers the gallery, and the engine is exact and complete on it."""
import pytest

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.evaluate import score
from rcqa.gallery import GALLERY, gallery_example
from rcqa.model import load_model
from rcqa.qa import answer
from tests.helpers.captum_equality import assert_matches_captum


@pytest.fixture(scope="module")
def default_model():
    return load_model("default")


def test_it_is_the_committed_fine_tuned_minilm(default_model):
    assert default_model.architecture == "BertForQuestionAnswering" and default_model.num_layers == 6
    assert default_model.card["squad_v1.1_dev"]["n"] == 10570
    assert default_model.card["squad_v1.1_dev"]["f1"] > 60


# A quantifier question whose passage holds a distracting number: the model picks the distractor (64 members).
# It stays in the gallery on purpose, to show the paper's quantifier analysis. (The 30 %-epoch model also took
# the orchard's 2,300 trees; the one-epoch model answers that one.)
DISTRACTED = {"choir-how-many"}


@pytest.mark.parametrize("example", [
    pytest.param(e, marks=pytest.mark.xfail(reason="the model picks a distracting number", strict=True))
    if e.id in DISTRACTED else e for e in GALLERY if e.answers], ids=lambda e: e.id)
def test_it_answers_the_gallery_questions(default_model, example):
    result = answer(default_model, example.passage, example.question)
    exact, f1 = score(result.text, [a.text for a in example.answers])
    assert f1 >= 0.5, (result.text, [a.text for a in example.answers])


def test_the_long_passage_needs_several_windows_and_the_best_one_wins(default_model):
    example = gallery_example("canal-long")
    result = answer(default_model, example.passage, example.question)
    assert result.n_windows >= 2
    assert result.text == "1852" and result.best.window > 0


@pytest.mark.slow  # Captum layer by layer on the embedded model: about 35 s
def test_engine_equals_captum_on_the_default_model(default_model):
    assert_matches_captum(default_model, gallery_example("bridge-how-much"), "pad", "span_logits",
                          "gausslegendre", 16)


@pytest.mark.slow  # every layer of the embedded model for the whole gallery: 8-40 s each
@pytest.mark.parametrize("example", GALLERY, ids=lambda e: e.id)
def test_default_settings_are_complete_within_one_percent_at_every_layer(default_model, example):
    # an unanswerable question's abstention is explained too: the null targets share the forward pass
    targets = ("span_log_prob", "null", "answer_vs_null") if example.is_impossible else ("span_log_prob",)
    result = explain(default_model, example, ExplainSettings(targets=targets, allow_null=example.is_impossible or None))
    assert {c.target for c in result.completeness} == set(targets)
    assert max(c.relative_error for c in result.completeness) <= 0.01
