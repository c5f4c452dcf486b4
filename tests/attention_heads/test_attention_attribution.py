"""Attention attribution (Hao et al.) against Captum's IntegratedGradients over the attention matrix of one layer
of a BERT (the layer's self-attention replaced, in a deep copy, by one that takes the matrix as its input); its
F(0) against the knock-out of every head of the layer (rcqa's gates, another way to zero the contexts); and
completeness on each family whose attention it scales."""
import copy

import numpy as np
import pytest
import torch
from captum.attr import IntegratedGradients

from rcqa.attention_heads import gated_model, head_case, span_log_likelihood
from rcqa.attention_heads.attention_attribution import attention_attribution
from rcqa.attention_heads.scores import layout_of
from rcqa.gallery import GALLERY
from rcqa.model import load_model
from tests.helpers.scaled_models import scaled_copy

EXAMPLE = GALLERY[0]


def scaled_up(tiny_model_dirs, tmp_path_factory, family):
    """The tiny model with its weight matrices scaled up (tests.helpers.scaled_models), and its case."""
    qa_model = scaled_copy(tiny_model_dirs[family], tmp_path_factory.mktemp("attention") / family)
    return qa_model, head_case(qa_model, EXAMPLE.passage, EXAMPLE.question)


def captum_attribution(qa_model, case, layer, steps):
    """Captum's IG of F over layer `layer`'s attention matrix A (batch × heads × tokens × tokens), baseline 0."""
    model = copy.deepcopy(qa_model.model).eval()
    model.config._attn_implementation = "eager"  # the copy's own config: eager attention returns its matrices
    with torch.no_grad():
        attention = model(**case.inputs, output_attentions=True).attentions[layer]
    module = model.bert.encoder.layer[layer].attention.self
    given = {}

    def forward(hidden_states, attention_mask=None, **kwargs):
        batch, tokens, _ = hidden_states.shape
        value = module.value(hidden_states).view(batch, tokens, -1, module.attention_head_size).transpose(1, 2)
        context = torch.matmul(given["attention"], value).transpose(1, 2).reshape(batch, tokens, -1)
        return context, None

    module.forward = forward

    def f(matrix):
        given["attention"] = matrix
        inputs = {key: value.repeat(matrix.shape[0], 1) for key, value in case.inputs.items()}
        output = model(**inputs)
        return span_log_likelihood(output.start_logits, output.end_logits, case.span).float()

    found = IntegratedGradients(f).attribute(attention, baselines=torch.zeros_like(attention), n_steps=steps,
                                             method="gausslegendre", internal_batch_size=steps)
    return found[0].sum(dim=(1, 2)).double().numpy()


def test_each_heads_attribution_is_captums_integrated_gradients_over_the_attention(tiny_model_dirs,
                                                                                   tmp_path_factory):
    qa_model, case = scaled_up(tiny_model_dirs, tmp_path_factory, "bert")
    found = attention_attribution(qa_model, case, steps=8)
    assert np.abs(found.heads).max() > 1e-3  # heads that matter, so that the comparison can fail
    for layer in range(found.heads.shape[0]):
        np.testing.assert_allclose(found.heads[layer], captum_attribution(qa_model, case, layer, 8),
                                   rtol=1e-4, atol=1e-6)


def test_f_of_zero_attention_is_every_head_of_the_layer_knocked_out(tiny_model_dirs, tmp_path_factory):
    qa_model, case = scaled_up(tiny_model_dirs, tmp_path_factory, "bert")
    found = attention_attribution(qa_model, case)
    layout = layout_of(qa_model, case)
    gates = torch.ones(1 + layout.layers, layout.layers, layout.heads)
    for layer in range(layout.layers):
        gates[1 + layer, layer] = 0  # row 0: nothing knocked out
    with torch.no_grad():
        output = gated_model(qa_model.model, layout, gates)(**{k: v.repeat(len(gates), 1) for k, v in
                                                              case.inputs.items()})
    f = span_log_likelihood(output.start_logits, output.end_logits, case.span).numpy()
    np.testing.assert_allclose(found.f_difference, f[0] - f[1:], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("family", ["bert", "distilbert", "electra", "roberta", "albert"])
def test_the_attribution_adds_up_to_what_removing_the_layers_attention_changes(tiny_model_dirs, tmp_path_factory,
                                                                               family):
    qa_model, case = scaled_up(tiny_model_dirs, tmp_path_factory, family)
    found = attention_attribution(qa_model, case, steps=64)  # weights × 15: a far from linear path
    assert found.heads.shape == (3, 2)
    assert (found.completeness_gap < 0.02).all()


def test_a_family_whose_attention_is_not_dispatched_is_refused_in_one_sentence(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    case = head_case(qa_model, EXAMPLE.passage, EXAMPLE.question)
    qa_model_config = copy.copy(qa_model.model.config)
    qa_model_config.model_type = "mpnet"
    other = copy.copy(qa_model)
    object.__setattr__(other, "model", copy.copy(qa_model.model))
    other.model.config = qa_model_config
    with pytest.raises(ValueError, match=r"^rcqa attributes attention for bert, .* models, not mpnet: "):
        attention_attribution(other, case)
