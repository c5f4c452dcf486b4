"""Each thread keeps its rule copy of a model between questions (rcqa.attribution.lrp.relevance): a question
explained after others, or after a call that failed midway, gets exactly the numbers it gets from a new copy, and a
model dropped from memory is not kept alive by its copy."""
import copy
import gc
import weakref

import pytest
import torch
from transformers import BertConfig, BertForQuestionAnswering

from rcqa.attribution.lrp import layer_relevance
from rcqa.attribution.lrp import relevance as relevance_module
from rcqa.attribution.targets import Target
from tests.helpers.random_weights import randomised

SMALL = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
             max_position_embeddings=64, vocab_size=50)
TARGETS = [Target("span_log_prob", 2, 5), Target("start_logit", 3, 3)]


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    return randomised(BertForQuestionAnswering(BertConfig(**SMALL))).eval()


def inputs(tokens: int, seed: int) -> dict[str, torch.Tensor]:
    ids = torch.randint(5, 50, (1, tokens), generator=torch.Generator().manual_seed(seed))
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def same(found, expected) -> bool:
    return (torch.equal(found.relevance, expected.relevance) and torch.equal(found.hidden, expected.hidden)
            and found.values == expected.values and found.ledgers == expected.ledgers)


def test_a_question_after_others_gets_the_numbers_a_new_copy_gives():
    shared = model()
    first = layer_relevance(shared, inputs(9, 1), TARGETS)
    other = layer_relevance(shared, inputs(14, 2), TARGETS)  # a longer window in between
    again = layer_relevance(shared, inputs(9, 1), TARGETS)
    assert same(again, first)
    assert same(other, layer_relevance(copy.deepcopy(shared), inputs(14, 2), TARGETS))  # a model of its own


def test_a_call_that_failed_midway_leaves_nothing_for_the_next():
    shared = model()
    alone = layer_relevance(copy.deepcopy(shared), inputs(9, 1), TARGETS)

    def failing(start_logits, end_logits):  # after the forward, before the backward: the relays hold states
        raise RuntimeError("a target that cannot be read")

    with pytest.raises(RuntimeError):
        layer_relevance(shared, inputs(11, 3), [failing])
    assert same(layer_relevance(shared, inputs(9, 1), TARGETS), alone)
    # a backward that failed inside the rules would leave their bookings in the ledger
    kept = next(iter(relevance_module._copies.by_model.values()))
    kept.ledger.add(1, "linear", torch.tensor(5.0), torch.tensor(0.0))
    assert same(layer_relevance(shared, inputs(9, 1), TARGETS), alone)


def test_a_dropped_model_is_not_kept_alive_by_its_copy():
    shared = model()
    layer_relevance(shared, inputs(9, 1), TARGETS)
    copies = relevance_module._copies.by_model
    before = len(copies)  # other tests' models may be alive still
    dropped = weakref.ref(shared)
    del shared
    gc.collect()
    assert dropped() is None
    assert len(copies) <= before - 1
