"""The prefix-cached engine: exact against Captum, complete, streaming, every architecture."""
import numpy as np
import pytest
import torch

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.targets import Target
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.qa import InputError
from rcqa.types import AGGREGATIONS
from tests.helpers.captum_equality import assert_matches_captum, first_window, pad_input
from tests.helpers.tiny_models import ARCHITECTURES


@pytest.mark.parametrize("windows", ["answer", "all"])
@pytest.mark.parametrize("baseline", ["pad", "zero"])
@pytest.mark.parametrize("target, method, steps", [("span_logits", "gausslegendre", 16),
                                                    ("paper_confidence", "riemann_right", 12),
                                                    ("span_log_prob", "gausslegendre", 8)])
def test_explain_equals_captum_on_a_tiny_model(tiny_model_dirs, baseline, target, method, steps, windows):
    qa_model = load_model(tiny_model_dirs["bert"])
    assert_matches_captum(qa_model, gallery_example("bridge-how-much"), baseline, target, method, steps, windows)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_every_architecture_attributes_every_layer_completely(tiny_model_dirs, architecture):
    qa_model = load_model(tiny_model_dirs[architecture])
    streamed = []
    result = explain(qa_model, gallery_example("comet-who"), ExplainSettings(), on_layer=streamed.append)
    layers = qa_model.num_layers + 1
    assert [r.layer for r in streamed] == list(range(layers))
    assert result.layers[0] == "embeddings" and result.layers[-1] == f"block {layers - 2}"
    assert result.scores.shape == (1, len(AGGREGATIONS), layers, len(result.tokens))
    assert np.allclose(result.scores[0, 0], np.stack([r.scores[0, 0] for r in streamed]))
    assert all(c.relative_error <= 0.01 for c in result.completeness)
    # the signed sum of token scores is the attribution total that completeness checks
    totals = result.layer_scores("sum").sum(axis=1)
    assert np.allclose(totals, [c.attribution_sum for c in result.completeness], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("baseline", ["pad", "zero"])
def test_the_paths_ends_are_the_models_own_logits_and_only_the_zero_baseline_is_run(tiny_bert, baseline,
                                                                                    monkeypatch):
    example = gallery_example("orchard-how-many")
    run_from, rows = LayerStack.run_from, []
    monkeypatch.setattr(LayerStack, "run_from", lambda self, layer, hidden: (rows.append(len(hidden)),
                                                                             run_from(self, layer, hidden))[1])
    result = explain(tiny_bert, example, ExplainSettings(baseline=baseline, tolerance=None, steps=4))
    layers = len(result.layers)
    assert sum(rows) == layers * (4 + (baseline == "zero"))  # each layer's 4 gradients, and a zero baseline's end
    inputs = first_window(tiny_bert, example)
    target = Target("span_log_prob", result.targets[0].start_token, result.targets[0].end_token)
    with torch.no_grad():
        def f(output) -> float:
            return float(target(output.start_logits, output.end_logits)[0])

        at_input, at_pad = f(tiny_bert.model(**inputs)), f(tiny_bert.model(**pad_input(tiny_bert, inputs)))
        stack = LayerStack(tiny_bert.model, inputs)
        at_zero = [float(target(*run_from(stack, layer, torch.zeros_like(stack.hidden[layer])))[0])
                   for layer in range(layers)]
    assert [c.f_input for c in result.completeness] == pytest.approx([at_input] * layers, abs=1e-5)
    expected = [at_pad] * layers if baseline == "pad" else at_zero
    assert [c.f_baseline for c in result.completeness] == pytest.approx(expected, rel=1e-5, abs=1e-5)


def test_targets_sharing_a_forward_equal_separate_runs(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("river-where")
    both = explain(qa_model, example, ExplainSettings(targets=("start_logit", "end_logit"), tolerance=None))
    alone = explain(qa_model, example, ExplainSettings(targets=("end_logit",), tolerance=None))
    assert np.allclose(both.scores[1], alone.scores[0], rtol=1e-4, atol=1e-6)


def test_adaptive_steps_raise_until_converged_and_report_them(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("marathon-who")
    coarse = explain(qa_model, example, ExplainSettings(steps=1, tolerance=None))
    refined = explain(qa_model, example, ExplainSettings(steps=1, tolerance=1e-3))
    assert max(c.relative_error for c in coarse.completeness) > 1e-3  # one point is not enough
    assert all(c.relative_error <= 1e-3 for c in refined.completeness)
    assert max(c.steps for c in refined.completeness) > 1


def test_max_steps_bounds_the_gradients_a_layer_spends(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    capped = explain(qa_model, gallery_example("marathon-who"), ExplainSettings(steps=2, tolerance=1e-9, max_steps=6))
    # two 1-point panels (2), Kronrod-extended one at a time (+2 each): 6 spent, a 6-point rule, not converged
    assert all(c.steps <= 6 for c in capped.completeness)
    assert max(c.relative_error for c in capped.completeness) > 1e-9


def test_paper_settings_run_and_report_their_completeness(tiny_model_dirs):
    result = explain(load_model(tiny_model_dirs["bert"]), gallery_example("lighthouse-who"), ExplainSettings.paper())
    assert result.settings.baseline == "zero" and result.settings.rule == "paper_trapezoid"
    assert all(c.steps == 20 for c in result.completeness)
    assert all(c.f_baseline != c.f_input for c in result.completeness)


def test_gold_and_nbest_spans(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("canal-long")
    gold = explain(qa_model, example, ExplainSettings(span="gold", tolerance=None, steps=4))
    assert gold.targets[0].span == "1852"
    third = explain(qa_model, example, ExplainSettings(span="nbest:2", tolerance=None, steps=4))
    assert third.targets[0].span == third.answer.nbest[2].text
    with pytest.raises(InputError, match="no gold answer"):
        explain(qa_model, gallery_example("library-unanswerable"), ExplainSettings(span="gold"))


def test_words_cover_the_window_and_round_trip_through_json(tiny_model_dirs):
    from rcqa.types import Attribution

    result = explain(load_model(tiny_model_dirs["bert"]), gallery_example("bridge-how-much"), ExplainSettings(steps=4))
    passage = result.example.passage
    assert all(passage[w.start_char:w.end_char] == w.text for w in result.passage_words())
    written = [w.text for w in result.passage_words()]
    assert "2.4" in written and "2" not in written and "," not in written  # words as written, punctuation none
    assert {w.tag for w in result.passage_words() if w.text in ("2.4", "million", "412")} == {"CD"}
    restored = Attribution.from_dict(result.to_dict())
    assert np.allclose(restored.scores, result.scores) and restored.words == result.words
    assert restored.completeness == result.completeness and restored.answer == result.answer


def test_the_squared_norm_is_the_square_of_the_l2_norm(tiny_bert):
    result = explain(tiny_bert, gallery_example("comet-who"), ExplainSettings(steps=4, tolerance=None))
    assert np.allclose(result.layer_scores("l2_squared"), result.layer_scores("l2") ** 2, rtol=1e-5)


def test_with_span_logits_the_last_block_attributes_the_span_ends_alone(tiny_bert):
    from rcqa.analysis.similarity import jsd_matrix
    from rcqa.analysis.words import passage_distribution, top_k

    result = explain(tiny_bert, gallery_example("orchard-how-many"),
                     ExplainSettings(targets=("span_logits",), steps=4, tolerance=None))
    distribution = passage_distribution(result)
    last = top_k(distribution, 5)[-1]
    assert 1 <= len(last) <= 2 and (distribution[-1] > 0).sum() == len(last)  # the QA head reads tokens one by one
    ends = {result.targets[0].start_token, result.targets[0].end_token}
    assert all(ends & set(result.passage_words()[i].tokens) for i in last)
    removed = jsd_matrix(distribution, "topk_removed", 5)
    assert np.isnan(removed[-1]).all() and not np.isnan(removed[0, 1])


def test_with_the_default_target_every_passage_word_has_attribution_at_every_layer(tiny_bert):
    from rcqa.analysis.words import passage_distribution

    result = explain(tiny_bert, gallery_example("orchard-how-many"), ExplainSettings(steps=4, tolerance=None))
    assert result.settings.targets == ("span_log_prob",) and (passage_distribution(result) > 0).all()


def test_categories_follow_the_explained_gold_span_in_its_own_window(tiny_bert):
    from rcqa.analysis.roles.categories import category_masks

    gold = explain(tiny_bert, gallery_example("canal-long"), ExplainSettings(span="gold", tolerance=None, steps=4))
    answer = category_masks(gold)["answer"]
    assert [w.text for w, inside in zip(gold.passage_words(), answer) if inside] == ["1852"]
    assert gold.explained_span() == (gold.example.answers[0].start_char,
                                     gold.example.answers[0].start_char + len("1852"))


@pytest.mark.parametrize("architecture", ["bert", "roberta"])
def test_word_pieces_belong_to_the_word_they_overlap(tiny_model_dirs, architecture):
    """Every word-piece overlaps the written word it is mapped onto, with BERT's and RoBERTa's tokenizers."""
    result = explain(load_model(tiny_model_dirs[architecture]), gallery_example("comet-who"),
                     ExplainSettings(steps=2, tolerance=None))
    for word in result.words:
        for token in word.tokens:
            start, end = result.token_offsets[token]
            assert word.start_char < end and start < word.end_char, (word.text, result.tokens[token])
