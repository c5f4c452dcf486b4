"""The attribution methods against independent references: Captum for the gradient methods and IG, attention
worked out from the weights by hand, tracing and rollout worked out on paper, and properties that must hold."""
import numpy as np
import pytest
import torch
from captum.attr import InputXGradient, LayerIntegratedGradients, Saliency

from rcqa.attribution.methods import METHODS, Case, make_method, normalised, word_scores
from rcqa.attribution.methods.attention import roll_down
from rcqa.attribution.methods.rollout import rollout_mixings, rollout_scores
from rcqa.attribution.methods.tracing import tracing_scores
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from tests.helpers.reference import max_relative_difference
from tests.helpers.tiny_models import ARCHITECTURES


@pytest.fixture(scope="module")
def case(tiny_bert):
    return Case.of(tiny_bert, gallery_example("bridge-how-much"))


def target_of(case, start_logits, end_logits):
    s, e = case.target_positions
    return start_logits.log_softmax(-1)[:, s] + end_logits.log_softmax(-1)[:, e]


def from_embeddings(case):
    """F as a function of the embeddings' output, through the whole Hugging Face model (a hook swaps the output)."""
    model = case.qa_model.model

    def forward(embeddings):
        handle = model.base_model.embeddings.register_forward_hook(lambda module, args, output: embeddings)
        try:
            batch = {k: v.expand(embeddings.shape[0], -1) for k, v in case.window.inputs.items()}
            output = model(**batch)
        finally:
            handle.remove()
        return target_of(case, output.start_logits, output.end_logits)

    with torch.no_grad():
        embeddings = model.base_model.embeddings(input_ids=case.window.inputs["input_ids"],
                                                 token_type_ids=case.window.inputs["token_type_ids"])
    return forward, embeddings.requires_grad_(True)


def test_gradient_sensitivity_is_the_squared_norm_of_captums_saliency(case):
    forward, embeddings = from_embeddings(case)
    gradient = Saliency(forward).attribute(embeddings, abs=False)[0]
    reference = (gradient.double() ** 2).sum(-1)
    found = make_method("gradient").attribute(case)
    assert list(found) == ["magnitude"]  # a gradient has no sign per token to rank by
    assert max_relative_difference(torch.from_numpy(found["magnitude"]), reference) <= 1e-5


def test_gradient_times_input_is_the_squared_norm_of_captums_input_x_gradient(case):
    forward, embeddings = from_embeddings(case)
    per_dim = InputXGradient(forward).attribute(embeddings)[0].detach().double()
    found = make_method("gradient_x_input").attribute(case)
    assert max_relative_difference(torch.from_numpy(found["magnitude"]), (per_dim ** 2).sum(-1)) <= 1e-5
    # a signed sum cancels: its float32 rounding is relative to the terms it sums (Σ|dims|), not to the sum itself
    terms = per_dim.abs().sum(-1).max()
    assert float((torch.from_numpy(found["signed"]) - per_dim.sum(-1)).abs().max() / terms) <= 1e-5


def test_integrated_gradients_equals_captums_layer_ig_on_the_embeddings(case):
    model, inputs, tokenizer = case.qa_model.model, case.window.inputs, case.qa_model.tokenizer
    ids = inputs["input_ids"]
    special = torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    pad_baseline = torch.where(special, ids, tokenizer.pad_token_id)  # Captum's tutorial baseline, as the engine's

    def forward(input_ids, attention_mask, token_type_ids):
        output = model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return target_of(case, output.start_logits, output.end_logits)

    attribution = LayerIntegratedGradients(forward, model.base_model.embeddings).attribute(
        ids, baselines=pad_baseline, additional_forward_args=(inputs["attention_mask"], inputs["token_type_ids"]),
        method="gausslegendre", n_steps=16)[0]
    ours = make_method("integrated_gradients", ExplainSettings(rule="gausslegendre", steps=16, tolerance=None))
    found = ours.attribute(case)
    assert max_relative_difference(torch.from_numpy(found["magnitude"]), (attribution.double() ** 2).sum(-1)) <= 1e-4
    # the signed score is Captum's attribution summed over dims: what its completeness (convergence delta) holds for
    assert max_relative_difference(torch.from_numpy(found["signed"]), attribution.double().sum(-1)) <= 1e-4


def test_attention_maps_are_the_softmax_of_queries_and_keys_worked_out_from_the_weights(case):
    """Layer 0 by hand: softmax(q kᵀ / √d) per head, from block 0's query and key weights and its input."""
    attention = case.qa_model.model.base_model.encoder.layer[0].attention.self
    hidden = case.stack.hidden[0][0].double()
    heads = case.qa_model.config.num_attention_heads
    size = hidden.shape[-1] // heads

    def project(linear):
        return (hidden @ linear.weight.double().T + linear.bias.double()).view(-1, heads, size).transpose(0, 1)

    queries, keys = project(attention.query), project(attention.key)
    expected = torch.softmax(queries @ keys.transpose(1, 2) / size ** 0.5, dim=-1).numpy()
    assert case.attentions.shape == (case.qa_model.num_layers, heads, case.length, case.length)
    assert np.allclose(case.attentions[0], expected, atol=1e-6)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_attention_is_read_on_a_private_copy_leaving_the_shared_model_as_it_was(tiny_model_dirs, architecture):
    qa_model = load_model(tiny_model_dirs[architecture])
    implementation = qa_model.config._attn_implementation
    attentions = Case.of(qa_model, gallery_example("comet-who")).attentions
    assert np.allclose(attentions.sum(axis=-1), 1.0, atol=1e-5)  # every row a distribution over the tokens
    assert qa_model.config._attn_implementation == implementation
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in qa_model.model.modules())


# Two layers, two heads, two tokens, worked out on paper. Heads summed: S1 = [[1.5, .5], [1, 1]],
# S2 = [[2, 0], [1, 1]]; averaged: M1 = [[.75, .25], [.5, .5]], M2 = [[1, 0], [.5, .5]].
ATTENTIONS = np.array([[[[1, 0], [0, 1]], [[0.5, 0.5], [1, 0]]],
                       [[[1, 0], [1, 0]], [[1, 0], [0, 1]]]], dtype=float)


def test_attention_tracing_rolls_a_one_hot_down_the_heads_summed_attention():
    # from token 1: [0, 1]·S2 = [1, 1]; [1, 1]·S1 = [2.5, 1.5]
    assert np.allclose(tracing_scores(ATTENTIONS, [1]), [2.5, 1.5])
    # from tokens 0 and 1 (the span's start and end): [1, 1]·S2 = [3, 1]; [3, 1]·S1 = [5.5, 2.5]
    assert np.allclose(tracing_scores(ATTENTIONS, [0, 1]), [5.5, 2.5])
    assert np.allclose(tracing_scores(ATTENTIONS, [1, 1]), [2.5, 1.5])  # a one-token span is one position


def test_attention_rollout_mixes_in_the_residual_and_multiplies_down():
    # Ã1 = .5 I + .5 M1 = [[.875, .125], [.25, .75]]; Ã2 = [[1, 0], [.25, .75]]
    assert np.allclose(rollout_mixings(ATTENTIONS), [[[0.875, 0.125], [0.25, 0.75]], [[1, 0], [0.25, 0.75]]])
    # row 1 of Ã2·Ã1: .25·[.875, .125] + .75·[.25, .75] = [.40625, .59375]
    assert np.allclose(rollout_scores(ATTENTIONS, [1]), [0.40625, 0.59375])


def test_rollout_normalises_rows_that_do_not_sum_to_one():
    unnormalised = np.array([[[[2.0, 0.0], [1.0, 1.0]]]])  # one layer, one head; the first row sums to 2
    # .5 I + .5 A = [[1.5, 0], [.5, 1]] → rows over their sums: [[1, 0], [1/3, 2/3]]
    assert np.allclose(rollout_mixings(unnormalised)[0], [[1, 0], [1 / 3, 2 / 3]])


def test_roll_down_multiplies_from_the_last_layer_to_the_first():
    first, last = np.array([[0, 1], [1, 0]]), np.array([[1, 0], [0, 0]])
    assert np.allclose(roll_down(np.stack([first, last]), [0]), [0, 1])  # e0·last = e0; e0·first = e1
    assert np.allclose(roll_down(np.stack([last, first]), [0]), [0, 0])  # e0·first = e1; e1·last = 0


def test_scores_are_normalised_by_the_largest_non_special_magnitude():
    special = np.array([True, False, False, False, True])
    assert np.allclose(normalised(np.array([100.0, -4.0, 2.0, 1.0, 50.0]), special), [0, -1, 0.5, 0.25, 0])
    assert np.allclose(normalised(np.zeros(3), np.zeros(3, dtype=bool)), 0)


@pytest.mark.parametrize("name", METHODS)
def test_every_method_scores_every_token_and_normalises_to_one(case, name):
    found = make_method(name).attribute(case)
    assert tuple(found) == METHODS[name].rankings
    for raw in found.values():
        scores = normalised(raw, case.special)
        assert scores.shape == (case.length,) and np.isfinite(scores).all()
        assert np.abs(scores[~case.special]).max() == pytest.approx(1.0) and (scores[case.special] == 0).all()
    if "signed" in found:  # a signed score speaks against the target somewhere, or it would not need two rankings
        assert (found["signed"][~case.special] < 0).any() and (found["magnitude"] >= 0).all()


def test_random_scores_are_reproducible_by_seed_and_rank_words_by_one_draw_each(case):
    first, again, other = (make_method("random", seed=seed).attribute(case)["random"] for seed in (3, 3, 4))
    assert np.array_equal(first, again) and not np.allclose(first, other)
    draws = np.random.default_rng(3).random(len(case.words))  # one uniform draw per word, in word order
    assert np.allclose(word_scores(first, case.words), draws)


def test_the_engine_only_computes_the_layers_asked_for(case):
    from rcqa.attribution.engine import WindowScope, iter_layers

    scope = WindowScope.of(case.qa_model, case.window.inputs, [case.target], "pad", case.stack)
    (only,) = iter_layers(scope, ExplainSettings(steps=2), layers=[0])
    assert only.layer == 0 and only.label == "embeddings"


@pytest.mark.parametrize("name", ["integrated_gradients", "attnlrp", "gradient_x_activation"])
def test_a_layer_wise_methods_view_is_its_explanations_embeddings_layer(tiny_bert, name):
    """One registry: every registered layer-wise method is offered at the embeddings with no class of its own, and
    its scores there are those its full explanation (rcqa.attribution.explain) gives its layer 0."""
    from rcqa.attribution.explanation import explain
    from rcqa.attribution.layerwise import LAYERWISE_METHODS

    assert set(LAYERWISE_METHODS) <= set(METHODS)
    example = gallery_example("bridge-how-much")
    settings = ExplainSettings(method=name, rule="gausslegendre", steps=4, tolerance=None,
                               targets=("span_logits",) if name == "attnlrp" else ("span_log_prob",))
    explained = explain(tiny_bert, example, settings)
    found = make_method(name, settings).attribute(Case.of(tiny_bert, example, settings.targets[0]))
    assert METHODS[name].label == LAYERWISE_METHODS[name].label.split(" (")[0]
    for ranking, aggregation in (("signed", "sum"), ("magnitude", "l2_squared")):
        expected = explained.layer_scores(aggregation)[0]
        assert np.allclose(found[ranking], expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


def test_gradient_times_activation_at_the_embeddings_is_captums_input_x_gradient(case):
    """The engine's one point of the path from the zero baseline is ∂F/∂E ⊙ E: gradient × input's score, which is
    why it is offered and not compared by default."""
    forward, embeddings = from_embeddings(case)
    per_dim = InputXGradient(forward).attribute(embeddings)[0].detach().double()
    found = make_method("gradient_x_activation").attribute(case)
    assert max_relative_difference(torch.from_numpy(found["magnitude"]), (per_dim ** 2).sum(-1)) <= 1e-4
    assert not METHODS["gradient_x_activation"].compared and METHODS["gradient_x_input"].compared
