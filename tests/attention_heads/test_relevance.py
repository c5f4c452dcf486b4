"""AttnLRP's relevance per head: the heads hold what reached their layer's output projection less its bias share
(conservation: the ε-rule's bias and stabiliser shares, on the families AttnLRP has rules for), its sign ranks the heads as their knock-outs do where a head
matters, and the shared model is left as it was. (The ε-rule itself is held to LXT in tests/attribution.)"""
import numpy as np
import pytest

from rcqa.attention_heads import head_case, knock_out_heads
from rcqa.attention_heads.relevance import head_relevance
from rcqa.gallery import GALLERY
from rcqa.model import load_model

EXAMPLE = GALLERY[0]


@pytest.mark.parametrize("family", ["bert", "distilbert", "electra", "roberta", "albert"])
def test_the_heads_hold_what_reached_the_projection_less_what_the_rule_absorbs(tiny_model_dirs, family):
    qa_model = load_model(tiny_model_dirs[family])
    case = head_case(qa_model, EXAMPLE.passage, EXAMPLE.question)
    found = head_relevance(qa_model, case)
    assert found.heads.shape == (3, 2)
    # up to float32's rounding of relevance summed over the window: 1e-4 of the relevance that moves at the layer
    moved = np.abs(found.heads).sum(axis=1) + np.abs(found.absorbed) + np.abs(found.entering)
    assert (np.abs(found.heads.sum(axis=1) + found.absorbed - found.entering) <= 1e-4 * moved).all()
    np.testing.assert_allclose(found.conservation_gap, np.abs(found.heads.sum(axis=1) + found.absorbed
                                                              - found.entering) / moved)
    assert (np.abs(found.heads).sum(axis=1) > 0).all()


def test_signed_relevance_orders_the_last_blocks_heads_as_their_knockouts_do():
    """A measured property on the lighthouse question (the default model): in the last two blocks, a head's AttnLRP
    relevance and the drop its knock-out causes rank the heads alike (Spearman's ρ > 0.8; measured 0.97, 0.92)."""
    from scipy.stats import spearmanr

    qa_model = load_model("default")
    case = head_case(qa_model, EXAMPLE.passage, EXAMPLE.question)
    found = head_relevance(qa_model, case)
    drop = -knock_out_heads(qa_model, case).delta_log_likelihood
    for layer in (4, 5):
        assert spearmanr(found.heads[layer], drop[layer]).statistic > 0.8


def test_the_shared_model_keeps_its_modules_and_gets_no_hooks(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    modules = dict(qa_model.model.named_modules())
    head_relevance(qa_model, head_case(qa_model, EXAMPLE.passage, EXAMPLE.question))
    assert all(qa_model.model.get_submodule(name) is module for name, module in modules.items())
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in qa_model.model.modules())
