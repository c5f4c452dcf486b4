"""Head knock-outs and gradient importance against references on a private deep copy of the model (transformers 5
has no head_mask left to compare with): a head knocked out is its columns of the attention output projection zeroed
(ALBERT, whose layers share that projection: its slice of the projection's input zeroed at that layer's call);
∂F/∂g is the finite difference of F as that slice is scaled by 1 − ε; the mean fill, the slice replaced by its
passage mean. The projections are named by hand here, not found by rcqa's search."""
import copy
import itertools
import threading

import numpy as np
import pytest
import torch

from rcqa.attention_heads import head_case, knock_out_heads, span_log_likelihood
from rcqa.attention_heads.gradient import gradient_importance
from rcqa.attention_heads.scores import layout_of
from rcqa.gallery import GALLERY
from rcqa.model import load_model
from tests.helpers.scaled_models import scaled_copy

FAMILIES = ("bert", "distilbert", "electra", "roberta", "albert")
EXAMPLE = GALLERY[0]


# the attention output projections of the tiny families, named by hand: BERT, ELECTRA, RoBERTa; DistilBERT; ALBERT
PROJECTION_NAMES = ("attention.output.dense", "attention.out_lin", "attention.dense")


def _edited_log_likelihood(qa_model, case, layer, head, scale=0.0, mean_fill=False):
    """F of a deep copy in which the head's slice of the context entering the attention output projection at
    `layer` (the layer-th projection call: ALBERT's one projection runs at every layer) is scaled by `scale` or,
    with mean_fill, replaced by its mean over the passage's tokens, by forward pre-hooks on the copy (in float64, so
    that a finite difference is not float32's rounding)."""
    model = copy.deepcopy(qa_model.model).double()
    head_dim = model.config.hidden_size // model.config.num_attention_heads
    columns = slice(head * head_dim, (head + 1) * head_dim)
    calls = itertools.count()

    def edit(module, args):
        if next(calls) != layer:
            return None
        context = args[0].clone()
        if mean_fill:
            context[0, :, columns] = context[0, case.passage_mask[0].bool()][:, columns].mean(dim=0)
        else:
            context[0, :, columns] *= scale
        return (context,)

    for name, module in model.named_modules():
        if name.endswith(PROJECTION_NAMES):
            module.register_forward_pre_hook(edit)
    with torch.no_grad():
        output = model(**case.inputs)
    return float(span_log_likelihood(output.start_logits, output.end_logits, case.span)[0])


def _weights_zeroed_log_likelihood(qa_model, case, layer, head):
    """F of a deep copy of a model whose layers do not share weights, with the head's columns of the layer's
    attention output projection zeroed."""
    model = copy.deepcopy(qa_model.model)
    projection = [m for name, m in model.named_modules() if name.endswith(PROJECTION_NAMES)][layer]
    head_dim = model.config.hidden_size // model.config.num_attention_heads
    with torch.no_grad():
        projection.weight[:, head * head_dim:(head + 1) * head_dim] = 0
        output = model(**case.inputs)
    return float(span_log_likelihood(output.start_logits, output.end_logits, case.span)[0])


@pytest.fixture(scope="module", params=FAMILIES)
def family(request, tiny_model_dirs, tmp_path_factory):
    """The tiny model of the family with its weight matrices scaled up (tests.helpers.scaled_models)."""
    qa_model = scaled_copy(tiny_model_dirs[request.param], tmp_path_factory.mktemp("heads") / request.param)
    return qa_model, head_case(qa_model, EXAMPLE.passage, EXAMPLE.question)


def test_the_scaled_tiny_models_heads_matter(family):
    """The references below are only as sharp as the effects they compare: here every layer has a head moving F
    by more than 1e-3."""
    deltas = np.abs(knock_out_heads(*family).delta_log_likelihood)
    assert (deltas.max(axis=1) > 1e-3).all()


def test_a_knocked_out_head_is_its_columns_of_the_output_projection_zeroed(family):
    qa_model, case = family
    knockouts = knock_out_heads(qa_model, case, rows_per_forward=4)  # batches that cut across layers
    with torch.no_grad():
        output = qa_model.model(**case.inputs)
    assert knockouts.unchanged == pytest.approx(
        float(span_log_likelihood(output.start_logits, output.end_logits, case.span)[0]), abs=1e-6)
    layers, heads = knockouts.delta_log_likelihood.shape
    assert (layers, heads) == (3, 2)  # the tiny models: 3 blocks of 2 heads
    for layer in range(layers):
        for head in range(heads):
            edited = (_edited_log_likelihood(qa_model, case, layer, head) if qa_model.config.model_type == "albert"
                      else _weights_zeroed_log_likelihood(qa_model, case, layer, head))
            assert knockouts.delta_log_likelihood[layer, head] == pytest.approx(edited - knockouts.unchanged,
                                                                                abs=1e-5)


def test_the_mean_fill_replaces_the_head_by_its_mean_over_the_passage(family):
    qa_model, case = family
    knockouts = knock_out_heads(qa_model, case, fill="mean")
    for layer, head in ((0, 1), (2, 0)):
        edited = _edited_log_likelihood(qa_model, case, layer, head, mean_fill=True)
        assert knockouts.delta_log_likelihood[layer, head] == pytest.approx(edited - knockouts.unchanged, abs=1e-5)


def test_gradient_importance_is_the_derivative_along_the_head_gate(family):
    qa_model, case = family
    importance = gradient_importance(qa_model, case)
    epsilon = 1e-4
    for layer in range(importance.shape[0]):
        for head in range(importance.shape[1]):
            slope = (_edited_log_likelihood(qa_model, case, layer, head, scale=1 + epsilon)
                     - _edited_log_likelihood(qa_model, case, layer, head, scale=1 - epsilon)) / (2 * epsilon)
            assert importance[layer, head] == pytest.approx(abs(slope), rel=1e-3, abs=1e-5)


def test_the_shared_model_is_left_as_it_was_and_two_threads_get_what_each_gets_alone(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    case = head_case(qa_model, EXAMPLE.passage, EXAMPLE.question)
    modules = dict(qa_model.model.named_modules())
    weights = {k: v.clone() for k, v in qa_model.model.state_dict().items()}
    alone = knock_out_heads(qa_model, case).delta_log_likelihood
    other = GALLERY[1]
    other_case = head_case(qa_model, other.passage, other.question)
    other_alone = knock_out_heads(qa_model, other_case).delta_log_likelihood
    results = {}

    def run(name, this_case):
        for _ in range(3):
            results[name] = knock_out_heads(qa_model, this_case).delta_log_likelihood

    threads = [threading.Thread(target=run, args=("a", case)), threading.Thread(target=run, args=("b", other_case))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    np.testing.assert_allclose(results["a"], alone, atol=1e-6)
    np.testing.assert_allclose(results["b"], other_alone, atol=1e-6)
    assert dict(qa_model.model.named_modules()).keys() == modules.keys()
    assert all(qa_model.model.get_submodule(name) is module for name, module in modules.items())
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in qa_model.model.modules())
    assert all(torch.equal(v, weights[k]) for k, v in qa_model.model.state_dict().items())


