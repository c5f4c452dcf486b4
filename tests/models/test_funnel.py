"""Funnel (FunnelForQuestionAnswering), which pools its tokens between encoder blocks, explained through the general
path: at every layer, the embeddings included (its first block reads them as query, key and value), its
attributions equal Captum's LayerIntegratedGradients on the same module (a hook on a model of its own); at the pooled
layer Captum's are per pooled position, and each token gets an equal share of its position's, the tokens of each
position worked out by hand from Funnel's pooling ([CLS] apart, then pairs, the last token dropped)."""
import pytest
import torch
from captum.attr import LayerIntegratedGradients
from transformers import AutoModelForQuestionAnswering

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.window import window_inputs
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.qa import encode
from rcqa.types import AGGREGATIONS
from tests.helpers.families import BY_NAME, build_family
from tests.helpers.reference import max_relative_difference

SETTINGS = ExplainSettings(baseline="pad", rule="gausslegendre", steps=16, tolerance=None)
POOLED = 2  # layers: embeddings, encoder block 0, encoder block 1 (pooled), decoder block 0


@pytest.fixture(scope="module")
def funnel(tmp_path_factory):
    """The tiny Funnel, its explanation of one window, that window's inputs and a model of Captum's own."""
    folder = build_family(BY_NAME["Funnel"], tmp_path_factory.mktemp("funnel") / "Funnel")
    qa_model = load_model(str(folder))
    result = explain(qa_model, gallery_example("comet-who"), SETTINGS)
    example = result.example
    inputs = window_inputs(encode(qa_model, example.question, example.passage), result.window)
    return qa_model, result, inputs, AutoModelForQuestionAnswering.from_pretrained(folder).eval()


def by_hand(tokens: int) -> list[list[int]]:
    """Funnel's groups with separate_cls and truncate_seq: [CLS] alone, then (1, 2), (3, 4) …; the last token is
    appended to [CLS] and cut, so no position holds it."""
    return [[0]] + [[t for t in (k, k + 1) if t < tokens - 1] for k in range(1, tokens - 1, 2)]


def captum_layer(model, module, inputs: dict, span: tuple[int, int], tokenizer) -> torch.Tensor:
    """LayerIntegratedGradients of log p(start) + log p(end) at module's output (its first element), from the [PAD]
    baseline (every token but the specials replaced), as the engine's settings ask."""
    ids = inputs["input_ids"]
    rest = [key for key in inputs if key != "input_ids"]
    special = torch.isin(ids, torch.tensor(tokenizer.all_special_ids))

    def forward(input_ids, *others):
        output = model(input_ids=input_ids, **dict(zip(rest, others)))
        return output.start_logits.log_softmax(-1)[:, span[0]] + output.end_logits.log_softmax(-1)[:, span[1]]

    found = LayerIntegratedGradients(forward, module).attribute(
        ids, baselines=torch.where(special, ids, tokenizer.pad_token_id),
        additional_forward_args=tuple(inputs[key] for key in rest), method="gausslegendre", n_steps=16)
    return (found[0] if isinstance(found, (tuple, list)) else found)[0].detach().double()


def test_the_hand_groups_are_funnels_own_pooling_on_a_short_sequence():
    """The groups by hand against the pooling transformers runs: the mean of each group is its pooled state."""
    from transformers import FunnelConfig
    from transformers.models.funnel.modeling_funnel import FunnelAttentionStructure

    states = torch.randn(1, 9, 3, generator=torch.Generator().manual_seed(0))
    pooled = FunnelAttentionStructure(FunnelConfig()).pool_tensor(states, mode="mean")
    expected = torch.stack([states[0, group].mean(0) for group in by_hand(9)])
    assert by_hand(9) == [[0], [1, 2], [3, 4], [5, 6], [7]]
    assert torch.allclose(pooled[0], expected)


@pytest.mark.parametrize("layer", range(4), ids=["embeddings", "encoder-block-0", "encoder-block-1-pooled",
                                                  "decoder-block-0"])
def test_every_layer_equals_captums_layer_ig_and_a_pooled_position_is_shared_by_its_tokens(funnel, layer):
    qa_model, result, inputs, model = funnel
    assert result.layers == ["embeddings", "encoder block 0", "encoder block 1", "decoder block 0"]
    module = [model.funnel.embeddings, model.funnel.encoder.blocks[0][0], model.funnel.encoder.blocks[1][0],
              model.funnel.decoder.layers[0]][layer]
    target = result.targets[0]
    reference = captum_layer(model, module, inputs, target.tokens, qa_model.tokenizer)
    tokens = inputs["input_ids"].shape[1]
    if layer == POOLED:  # each position's attribution vector shared out over the tokens it pools
        groups = by_hand(tokens)
        assert reference.shape[0] == len(groups) < tokens
        shared = torch.zeros(tokens, reference.shape[1], dtype=reference.dtype)
        for position, group in enumerate(groups):
            shared[group] = reference[position] / len(group)
        reference = shared
    scores = torch.from_numpy(result.scores[0, :, layer])
    for name, expected in (("sum", reference.sum(-1)), ("l2", reference.norm(dim=-1))):
        assert max_relative_difference(scores[AGGREGATIONS.index(name)], expected) <= 1e-4, name
    if layer == POOLED:
        assert scores[AGGREGATIONS.index("l2"), tokens - 1] == 0  # the dropped last token has no share
        completeness = next(c for c in result.completeness if c.layer == layer)
        assert completeness.attribution_sum == pytest.approx(float(reference.sum()), rel=1e-4)


def test_the_pooled_layers_states_are_each_tokens_pooled_state(funnel):
    """The states a result keeps at the pooled layer: each token holds its position's (transformers' own hidden
    states, read without rcqa), the dropped last token zeros; the other layers' are transformers' as they are."""
    _, result, inputs, model = funnel
    with torch.no_grad():
        own = model(**inputs, output_hidden_states=True).hidden_states  # encoder's 3, then the decoder's 2
    kept = torch.from_numpy(result.hidden_states)
    groups = by_hand(inputs["input_ids"].shape[1])
    for position, group in enumerate(groups):
        assert torch.allclose(kept[POOLED, group], own[POOLED][0, position].expand(len(group), -1), atol=1e-6)
    assert not kept[POOLED, -1].any()
    for layer, states in ((0, own[0]), (1, own[1]), (3, own[4])):
        assert torch.allclose(kept[layer], states[0], atol=1e-6), layer
