"""What the adapter finds of a model, checked against each family's known architecture (transformers' module
names) and against hand-built toy models whose every part is known: the blocks and their labels, what runs after
the last block, the QA head, the path and why, where the batch and tokens sit, and whether the first token reads
the input. Built in memory, in seconds: the fast selection that mutation-tests rcqa/adapter.py (docs/testing.md);
tests/models/test_adapter.py explains every family end to end."""
import re
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from transformers import AutoConfig, AutoModelForQuestionAnswering

from rcqa.adapter.calls import Call, first, with_first, without_cache
from rcqa.adapter.copies import Recorder, with_replacements
from rcqa.adapter.discovery import FAST_FAMILIES, _axes, adapter_of, discover
from rcqa.adapter.model_adapter import ModelAdapter
from rcqa.adapter.structure import block_lists, outside_blocks
from tests.helpers.families import BY_NAME, FAMILIES

IDS = torch.tensor([[1, 10, 11, 12, 2, 20, 21, 22, 23, 2]])  # [CLS]-like 1, question, separator 2, passage, 2
INPUTS = {"input_ids": IDS, "attention_mask": torch.ones_like(IDS)}
FAST_WHY = "its prefix-cached stack is proven equal to its forward"
UNPROVEN = "no test has proven its prefix-cached stack equal to its forward"


def tiny(name: str) -> torch.nn.Module:
    family = BY_NAME[name]
    torch.manual_seed(0)
    config = AutoConfig.for_model(family.model_type, vocab_size=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                  cls_token_id=1, sep_token_id=2, **family.config)
    return AutoModelForQuestionAnswering.from_config(config).eval()


shared_tiny = cache(tiny)  # discovery leaves the model as it was, so one model serves every test


def found(name: str) -> tuple[torch.nn.Module, ModelAdapter]:
    """The family's model and its adapter, found in the test itself (so that mutmut, which runs only the tests that
    call a function, runs each test that checks what discovery found)."""
    model = shared_tiny(name)
    return model, discover(model, INPUTS)


def test_an_encoder_finds_its_blocks_head_and_the_fast_path():
    model, adapter = found("BERT")
    assert adapter.architecture == "BertForQuestionAnswering" and adapter.model_type == "bert"
    assert len(adapter.blocks) == 1 and adapter.blocks[0] is model.bert.encoder.layer
    assert adapter.block_names == ("bert.encoder.layer",)
    assert adapter.labels == ("embeddings", "block 0", "block 1") and adapter.num_layers == 2
    assert adapter.final == () and adapter.head is model.qa_outputs
    assert (adapter.path, adapter.why) == ("fast", FAST_WHY)
    assert adapter.axes == (0, 1, 2) and adapter.first_token_reads_input
    assert adapter.describe() == ("BertForQuestionAnswering: blocks bert.encoder.layer (2); after the last block: "
                                  f"nothing; the fast path ({FAST_WHY})")


def test_a_pre_ln_encoder_ends_with_its_final_norm():
    model, adapter = found("Megatron-BERT")
    assert adapter.final == (model.bert.encoder.ln,) and adapter.head is model.qa_outputs and adapter.path == "fast"
    assert "; after the last block: LayerNorm; the fast path" in adapter.describe()


def test_modernbert_runs_its_final_norm_prediction_head_and_dropout_before_its_classifier():
    model, adapter = found("ModernBERT")
    assert adapter.blocks[0] is model.model.layers and adapter.block_names == ("model.layers",)
    assert adapter.final == (model.model.final_norm, model.head, model.drop) and adapter.head is model.classifier
    assert adapter.path == "fast" and adapter.first_token_reads_input
    assert "after the last block: LayerNorm, ModernBertPredictionHead, Dropout;" in adapter.describe()


def test_a_decoder_only_model_ends_with_its_norm_and_its_first_token_reads_only_itself():
    model, adapter = found("Llama")
    assert adapter.blocks[0] is model.transformer.layers and adapter.labels == ("embeddings", "block 0", "block 1")
    assert adapter.final == (model.transformer.norm,) and adapter.head is model.qa_outputs
    assert adapter.path == "fast" and not adapter.first_token_reads_input


def test_an_encoder_decoder_runs_its_encoder_blocks_then_its_decoders_on_the_general_path():
    model, adapter = found("BART")
    assert [id(b) for b in adapter.blocks] == [id(model.model.encoder.layers), id(model.model.decoder.layers)]
    assert adapter.block_names == ("model.encoder.layers", "model.decoder.layers")
    assert adapter.labels == ("embeddings", "encoder block 0", "encoder block 1", "decoder block 0",
                              "decoder block 1") and adapter.num_layers == 4
    assert adapter.final == () and adapter.head is model.qa_outputs
    assert (adapter.path, adapter.why) == ("general", UNPROVEN) and adapter.first_token_reads_input
    assert adapter.describe() == ("BartForQuestionAnswering: blocks model.encoder.layers (2) then "
                                  f"model.decoder.layers (2); after the last block: nothing; the general path "
                                  f"({UNPROVEN})")


def test_albert_counts_each_call_of_its_shared_group():
    model, adapter = found("ALBERT")
    assert adapter.blocks[0] is model.albert.encoder.albert_layer_groups and len(adapter.blocks[0]) == 1
    assert adapter.labels == ("embeddings", "block 0", "block 1") and adapter.num_layers == 2


def test_where_the_blocks_keep_batch_and_tokens():
    """XLNet's blocks take tokens × batch × dim, SqueezeBERT's batch × dim × tokens (its feature map in a dict)."""
    (_, xlnet), (_, squeezebert) = found("XLNet"), found("SqueezeBERT")
    assert xlnet.axes == (1, 0, 2) and squeezebert.axes == (0, 2, 1)
    assert xlnet.path == "general" and squeezebert.path == "general"


def test_the_axes_are_read_at_the_first_block_before_a_funnel_pools_its_tokens():
    """Funnel's second block holds half the tokens: its axes are read where all the tokens are. Its encoder keeps a
    list of lists of blocks: they are labelled by the encoder, then its decoder's."""
    model, adapter = found("Funnel")
    assert adapter.block_names == ("funnel.encoder.blocks.0", "funnel.encoder.blocks.1", "funnel.decoder.layers")
    assert adapter.blocks[0] is model.funnel.encoder.blocks[0] and adapter.axes == (0, 1, 2)
    assert adapter.labels == ("embeddings", "encoder block 0", "encoder block 1", "decoder block 0")
    assert adapter.final == () and adapter.head is model.qa_outputs
    assert ("after the last block: nothing; pools its tokens between blocks: at a pooled layer the tokens each state "
            "pools share its score equally; the general path") in adapter.describe()


def funnel_groups(tokens: int, positions: int, **config) -> list[list[float]]:
    family = BY_NAME["Funnel"]
    torch.manual_seed(0)
    model = AutoModelForQuestionAnswering.from_config(AutoConfig.for_model(
        "funnel", vocab_size=64, pad_token_id=0, **{**family.config, **config})).eval()
    return discover(model, INPUTS).token_groups(tokens, positions).tolist()


# Funnel's pooling worked out by hand. separate_cls and truncate_seq (its defaults): [CLS] alone, then the tokens
# from the second in pairs, the last token dropped (it is appended to [CLS] and cut), a lone last pair member kept.
# Seven tokens: [0] [1 2] [3 4] [5], token 6 dropped; eight: [0] [1 2] [3 4] [5 6], token 7 dropped; eight pooled
# twice: [0] [1 2 3 4] (the positions [0] [1 2] [3 4] [5 6] pool as [0] [[1 2] [3 4]], [5 6] dropped).
# Without them, plain pairs: five tokens [0 1] [2 3] [4].
H, Q = 0.5, 0.25
@pytest.mark.parametrize(("tokens", "positions", "config", "groups"), [
    (7, 4, {}, [[1, 0, 0, 0, 0, 0, 0], [0, H, H, 0, 0, 0, 0], [0, 0, 0, H, H, 0, 0], [0, 0, 0, 0, 0, 1, 0]]),
    (8, 4, {}, [[1, 0, 0, 0, 0, 0, 0, 0], [0, H, H, 0, 0, 0, 0, 0], [0, 0, 0, H, H, 0, 0, 0],
                [0, 0, 0, 0, 0, H, H, 0]]),
    (8, 2, {}, [[1, 0, 0, 0, 0, 0, 0, 0], [0, Q, Q, Q, Q, 0, 0, 0]]),
    (5, 3, {"separate_cls": False, "truncate_seq": False}, [[H, H, 0, 0, 0], [0, 0, H, H, 0], [0, 0, 0, 0, 1]]),
    (5, 5, {}, [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]]),
])
def test_funnels_pooled_positions_share_out_over_the_tokens_each_pools(tokens, positions, config, groups):
    assert funnel_groups(tokens, positions, **config) == groups


def test_a_max_pooling_funnel_pools_the_same_groups():
    assert funnel_groups(7, 4, pooling_type="max") == funnel_groups(7, 4)


def test_a_pooling_the_adapter_cannot_map_back_is_refused_in_one_sentence():
    _, funnel = found("Funnel")
    with pytest.raises(ValueError, match="^FunnelForQuestionAnswering pools its 8 tokens to 3 states in a way rcqa "
                                         "cannot map back onto the tokens, so that layer cannot be attributed"):
        funnel.token_groups(8, 3)
    with pytest.raises(ValueError, match="^FunnelForQuestionAnswering pools its 4 tokens to 0 states"):
        funnel.token_groups(4, 0)  # pooled to one state, which pools no further
    _, bert = found("BERT")  # no pooling at all
    with pytest.raises(ValueError, match="^BertForQuestionAnswering pools its 8 tokens to 4 states"):
        bert.token_groups(8, 4)


@pytest.mark.parametrize("name", ["BERT", "DistilBERT", "Megatron-BERT", "ModernBERT", "Llama", "mBART", "T5",
                                  "Funnel", "SqueezeBERT", "XLNet"])
def test_what_runs_after_the_last_block_is_what_the_qa_head_reads(name):
    """The final modules, run on the last block's states, then the head, give the model's own logits."""
    from rcqa.attribution.stack import LayerStack

    stack = LayerStack(shared_tiny(name), INPUTS)
    hidden = stack.hidden[-1]
    with torch.no_grad():
        for module in stack.adapter.final:
            hidden = first(module(hidden))
        start, end = stack.adapter.head(hidden).split(1, dim=-1)
    assert torch.allclose(start.squeeze(-1), stack.start_logits, atol=1e-5)
    assert torch.allclose(end.squeeze(-1), stack.end_logits, atol=1e-5)


def test_squeezebert_s_pooler_is_not_on_its_qa_head_s_path():
    """SqueezeBERT's model runs its pooler after the last block, but its QA head reads the encoder's output."""
    model, adapter = found("SqueezeBERT")
    assert adapter.final == () and adapter.head is model.qa_outputs
    assert "after the last block: nothing;" in adapter.describe()


@pytest.mark.parametrize("axes", [(1, 0, 2), (0, 2, 1), (1, 2, 0), (2, 0, 1)])
def test_standard_lays_the_states_out_as_batch_tokens_dim_and_native_undoes_it(axes):
    adapter = ModelAdapter("A", "a", (), (), ("embeddings",), (), None, "general", "", True, axes)
    shape = [0, 0, 0]
    for size, axis in zip((2, 3, 5), axes):  # batch 2, tokens 3, dim 5 at the native axes
        shape[axis] = size
    native = torch.arange(30.0).reshape(shape)
    letters = ["", "", ""]
    for letter, axis in zip("btd", axes):
        letters[axis] = letter
    expected = torch.einsum(f"{''.join(letters)}->btd", native)
    assert torch.equal(adapter.standard(native), expected) and torch.equal(adapter.native(expected), native)
    assert adapter.num_layers == 0


@pytest.mark.parametrize(("shape", "batch", "tokens", "axes"), [
    ((2, 10, 4), 2, 10, (0, 1, 2)), ((10, 2, 4), 2, 10, (1, 0, 2)), ((2, 4, 10), 2, 10, (0, 2, 1)),
    ((3, 3, 4), 3, 3, (0, 1, 2)),  # batch as many as tokens: the tokens are taken second, as most models keep them
    ((2, 4, 4), 2, 4, (0, 1, 2)),  # dim as many as tokens
    ((4, 2, 4), 2, 4, (1, 0, 2)),
    ((2, 16, 8), 2, 10, (0, 1, 2)),  # Longformer pads 10 tokens to 16
    ((16, 2, 32), 2, 10, (1, 0, 2)),
    ((1, 10, 4), 1, 10, (0, 1, 2)), ((10, 1, 4), 1, 10, (1, 0, 2)),
    ((10, 4, 2), 2, 10, (2, 0, 1)), ((4, 10, 2), 2, 10, (2, 1, 0))])
def test_the_axes_are_found_from_the_batch_and_token_counts(shape, batch, tokens, axes):
    assert _axes(torch.zeros(shape), batch, tokens) == axes


def test_the_adapter_is_found_once_per_model():
    model, other = tiny("BERT"), tiny("BERT")
    adapter = adapter_of(model, INPUTS)
    assert adapter_of(model, {"input_ids": IDS[:, :4]}) is adapter  # not found again from another probe
    assert adapter_of(other, INPUTS) is not adapter and adapter.head is model.qa_outputs


def test_the_families_on_the_fast_path_are_those_docs_models_records_there():
    """docs/models.md's table, written by the per-family test, gives each family's path."""
    table = (Path(__file__).parents[2] / "docs" / "models.md").read_text()
    paths = dict(re.findall(r"^\| ([\w.-]+) \| (fast|general) \|", table, re.MULTILINE))
    fast = {f.model_type for f in FAMILIES if paths.get(f.name) == "fast"}
    assert fast == set(FAST_FAMILIES)


# Hand-built models: one embedding, two linear blocks, a norm and a linear QA head, whose every call is known.

class Toy(torch.nn.Module):
    """A QA model of a fast family (bert by default) with knobs that break, one at a time, what the fast path
    needs."""

    def __init__(self, model_type: str | None = "bert", head: torch.nn.Module | None = None, between: float = 0.0,
                 shift: tuple[float, float] = (0.0, 0.0), causal: bool = False, use_cache: bool = False,
                 skip: bool = False, blocks: int = 2):
        super().__init__()
        torch.manual_seed(0)
        self.config = SimpleNamespace(use_cache=use_cache)
        if model_type is not None:
            self.config.model_type = model_type
        self.embeddings = torch.nn.Embedding(32, 4)
        self.positions = torch.nn.Embedding(16, 4)
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(blocks)])
        self.norm = torch.nn.LayerNorm(4)
        self.qa_outputs = head if head is not None else torch.nn.Linear(4, 2)
        self.between, self.shift, self.causal, self.skip = between, shift, causal, skip

    def forward(self, input_ids, attention_mask=None, use_cache=None):
        assert use_cache is None or use_cache is False
        states = self.embeddings(input_ids) + self.positions(torch.arange(input_ids.shape[1]))
        if self.causal:  # each token the mean of itself and those before it
            states = states.cumsum(1) / torch.arange(1, states.shape[1] + 1)[:, None]
        else:  # each token plus the mean of all
            states = states + states.mean(1, keepdim=True)
        for block in ([] if self.skip else self.layers):
            states = block(states) + self.between
        start, end = self.qa_outputs(self.norm(states)).split(1, dim=-1)
        return SimpleNamespace(start_logits=start.squeeze(-1) + self.shift[0],
                               end_logits=end.squeeze(-1) + self.shift[1])


def test_a_plain_chain_of_a_proven_family_takes_the_fast_path():
    toy = Toy()
    adapter = discover(toy, INPUTS)
    assert adapter.blocks == (toy.layers,) and adapter.block_names == ("layers",)
    assert adapter.labels == ("embeddings", "block 0", "block 1")
    assert adapter.final == (toy.norm,) and adapter.head is toy.qa_outputs
    assert (adapter.path, adapter.why) == ("fast", FAST_WHY) and adapter.first_token_reads_input
    assert adapter.architecture == "Toy" and adapter.model_type == "bert" and adapter.axes == (0, 1, 2)


@pytest.mark.parametrize(("toy", "why"), [
    (Toy(model_type="t5"), UNPROVEN),
    (Toy(head=torch.nn.Sequential(torch.nn.Linear(4, 2))),
     "its QA head is not one linear layer over the last hidden states"),
    (Toy(between=0.5), "something other than its blocks and final modules runs between its layers"),
    (Toy(shift=(0.5, 0.0)), "its logits are not its QA head's output as it stands"),
    (Toy(shift=(0.0, 0.5)), "its logits are not its QA head's output as it stands"),
    (Toy(model_type=None), UNPROVEN),
])
def test_each_reason_for_the_general_path(toy, why):
    adapter = discover(toy, INPUTS)
    assert (adapter.path, adapter.why) == ("general", why)


def test_what_runs_after_the_last_of_three_blocks():
    toy = Toy(blocks=3)
    adapter = discover(toy, INPUTS)
    assert adapter.labels == ("embeddings", "block 0", "block 1", "block 2")
    assert adapter.final == (toy.norm,) and adapter.head is toy.qa_outputs and adapter.path == "fast"


def test_a_model_without_a_model_type_has_none():
    assert discover(Toy(model_type=None), INPUTS).model_type == ""


def test_a_block_listed_twice_is_recorded_at_each_call():
    """Weights shared by listing one block twice: both calls are layers."""
    toy = Toy()
    toy.layers = torch.nn.ModuleList([toy.layers[0], toy.layers[0]])
    adapter = discover(toy, INPUTS)
    assert adapter.labels == ("embeddings", "block 0", "block 1") and adapter.path == "fast"


class TwoLists(Toy):
    """The toy's blocks kept in two lists at the model's top, "encoder" and "decoder", run one after the other."""

    def __init__(self):
        super().__init__()
        blocks = self._modules.pop("layers")
        self.encoder, self.decoder = blocks[:1], blocks[1:]

    @property
    def layers(self) -> list[torch.nn.Module]:
        return [*self.encoder, *self.decoder]


def test_lists_at_the_model_s_top_are_labelled_by_their_own_names():
    adapter = discover(TwoLists(), INPUTS)
    assert adapter.block_names == ("encoder", "decoder")
    assert adapter.labels == ("embeddings", "encoder block 0", "decoder block 0")


def test_a_head_that_is_not_one_linear_layer_is_no_head():
    toy = Toy(head=torch.nn.Sequential(torch.nn.Linear(4, 2)))
    adapter = discover(toy, INPUTS)
    assert adapter.head is None and adapter.final == ()


def test_a_head_of_another_width_is_no_span_head():
    """A linear layer giving 3 values per token is not a start-and-end head."""
    class Wide(Toy):
        def forward(self, input_ids, attention_mask=None):
            start, end, _ = self.qa_outputs(self.layers[1](self.layers[0](self.embeddings(input_ids)))).split(1, -1)
            return SimpleNamespace(start_logits=start.squeeze(-1), end_logits=end.squeeze(-1))

    toy = Wide(head=torch.nn.Linear(4, 3))
    adapter = discover(toy, INPUTS)
    assert adapter.head is None and adapter.path == "general"


def test_a_causal_model_s_first_token_does_not_read_the_input():
    assert not discover(Toy(causal=True), INPUTS).first_token_reads_input


def test_the_first_token_reads_the_input_through_its_start_or_its_end_logit():
    """A head whose start logit at the first token reads only the first token still reads the input through its
    end logit, and the other way round."""
    for reading in (0, 1):
        class OneSided(Toy):
            def forward(self, input_ids, attention_mask=None, reading=reading):
                states = self.layers[1](self.layers[0](self.embeddings(input_ids)))  # token by token
                logits = [states[..., 0], states[..., 1]]
                logits[reading] = logits[reading] + states.sum(1)[:, None, 0]  # every token's value, at every token
                return SimpleNamespace(start_logits=logits[0], end_logits=logits[1])

        assert discover(OneSided(), INPUTS).first_token_reads_input, reading


def test_the_first_token_is_compared_with_every_other_token_changed_but_the_specials():
    """The probe keeps the tokens like the first and the last (the separators) and changes the rest: a first token
    that reads only the separators does not read the input, one that reads a passage token does."""
    class Reads(Toy):
        def __init__(self, position):
            super().__init__()
            self.position = position

        def forward(self, input_ids, attention_mask=None):
            states = self.layers[1](self.layers[0](self.embeddings(input_ids)))  # token by token
            start = states[..., 0] + states[:, self.position, 0][:, None]
            return SimpleNamespace(start_logits=start, end_logits=states[..., 1])

    assert not discover(Reads(4), INPUTS).first_token_reads_input  # the separator inside
    assert not discover(Reads(-1), INPUTS).first_token_reads_input  # the last separator
    assert discover(Reads(5), INPUTS).first_token_reads_input  # the passage's first token
    assert discover(Reads(1), INPUTS).first_token_reads_input  # the question's first token


def test_a_model_with_a_cache_is_probed_without_it():
    toy = Toy(use_cache=True)  # its forward fails on use_cache=True
    assert without_cache(toy, INPUTS) == {**INPUTS, "use_cache": False}
    assert without_cache(Toy(), INPUTS) is INPUTS
    no_cache = Toy()
    del no_cache.config.use_cache  # a config that has no cache to turn off
    assert without_cache(no_cache, INPUTS) is INPUTS
    assert discover(toy, INPUTS).path == "fast"


def test_a_model_without_blocks_or_whose_forward_skips_them_is_refused_in_one_sentence():
    with pytest.raises(ValueError, match="^Linear has no list of blocks, so it has no layers to explain$"):
        block_lists(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="^Toy: its forward called none of its blocks$"):
        discover(Toy(skip=True), INPUTS)


def test_block_lists_are_the_outermost_lists_and_a_list_of_lists_counts_as_its_inner_lists():
    inner = [torch.nn.ModuleList([torch.nn.Linear(2, 2)]), torch.nn.ModuleList([torch.nn.Linear(2, 2)] * 2)]
    model = torch.nn.Module()
    model.empty = torch.nn.ModuleList()  # no blocks
    model.encoder = torch.nn.Module()
    model.encoder.blocks = torch.nn.ModuleList(inner)
    model.decoder = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.ModuleList([torch.nn.Linear(2, 2)]))])
    lists = block_lists(model)
    assert [name for name, _ in lists] == ["encoder.blocks.0", "encoder.blocks.1", "decoder"]
    assert lists[0][1] is inner[0] and lists[1][1] is inner[1] and lists[2][1] is model.decoder
    root = torch.nn.ModuleList([torch.nn.Linear(2, 2)])
    assert block_lists(root) == [("", root)]  # the list is the model: it sits at the empty name

def test_the_modules_outside_the_blocks_are_the_largest_that_hold_none():
    model = shared_tiny("BERT")
    assert outside_blocks(model, [model.bert.encoder.layer]) == [model.bert.embeddings, model.qa_outputs]
    model = shared_tiny("Llama")
    outside = outside_blocks(model, [model.transformer.layers])
    assert outside == [model.transformer.embed_tokens, model.transformer.norm, model.transformer.rotary_emb,
                       model.qa_outputs]


def test_a_module_shared_by_two_parents_is_outside_once():
    shared = torch.nn.Linear(2, 2)
    model = torch.nn.Module()
    model.body = torch.nn.Module()
    model.body.layers = torch.nn.ModuleList([torch.nn.Linear(2, 2)])
    model.body.norm = shared
    model.norm = shared
    assert outside_blocks(model, [model.body.layers]) == [shared]


# The recording and the private copy

def test_the_hidden_states_out_of_each_kind_of_output():
    hidden, rest = torch.ones(1), torch.zeros(1)
    for output in (hidden, (hidden, rest), [hidden, rest], {"feature_map": hidden, "other": rest}):
        assert first(output) is hidden
        assert Call(torch.nn.Identity(), rest, (), {}, output).hidden_out is hidden
    new = torch.full((1,), 2.0)
    assert with_first(hidden, new) is new
    replaced = with_first((hidden, rest), new)
    assert isinstance(replaced, tuple) and replaced[0] is new and replaced[1] is rest and len(replaced) == 2
    assert with_first([hidden, rest], new) == (new, rest)
    assert with_first({"feature_map": hidden, "other": rest}, new) == {"feature_map": new, "other": rest}


def test_a_recorder_makes_the_call_records_it_and_reads_through_to_its_module():
    linear = torch.nn.Linear(3, 2)
    calls = []
    recorder = Recorder(linear, calls.append)
    x, extra = torch.ones(1, 3), torch.zeros(1)
    assert torch.equal(recorder(x), linear(x))
    assert recorder.in_features == 3 and recorder.module is linear
    (call,) = calls
    assert call.module is linear and call.hidden is x and call.args == () and call.kwargs == {}
    assert torch.equal(call.output, linear(x))

    def block(hidden_states, mask, scale=1.0):
        return (hidden_states * scale, mask)

    wrapped = torch.nn.Module()
    wrapped.forward = block
    calls.clear()
    output = Recorder(wrapped, calls.append)(hidden_states=x, mask=extra, scale=2.0)
    (call,) = calls
    assert call.hidden is x and call.kwargs == {"mask": extra, "scale": 2.0} and call.output is output
    calls.clear()
    Recorder(wrapped, calls.append)(x, extra, scale=3.0)
    assert calls[0].hidden is x and calls[0].args == (extra,) and calls[0].kwargs == {"scale": 3.0}


def test_the_private_copy_runs_the_replacements_and_leaves_the_model_and_its_parameters_as_they_were():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sequential(torch.nn.Linear(2, 2),
                                                                           torch.nn.Linear(2, 2)))
    before = [(name, id(m)) for name, m in model.named_modules()]
    inner = model[1][1]
    replacement = torch.nn.Identity()
    private = with_replacements(model, {inner: replacement})
    x = torch.randn(1, 2)
    assert torch.equal(private(x), model[1][0](model[0](x)))
    assert [(name, id(m)) for name, m in model.named_modules()] == before
    assert private is not model and private[1] is not model[1] and private[1][1] is replacement
    assert private[0] is model[0] and private[1][0] is model[1][0]  # shared, with their parameters


def test_a_module_at_two_places_runs_its_replacement_at_both():
    shared = torch.nn.Linear(2, 2)
    model = torch.nn.Sequential(shared, torch.nn.Sequential(shared))
    private = with_replacements(model, {shared: torch.nn.Identity()})
    x = torch.randn(1, 2)
    assert torch.equal(private(x), x) and model[0] is shared and model[1][0] is shared


def test_two_replacements_under_one_parent_copy_that_parent_once():
    model = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)))
    first_copy, second_copy = torch.nn.Identity(), torch.nn.Identity()
    private = with_replacements(model, {model[0][0]: first_copy, model[0][1]: second_copy})
    assert private[0][0] is first_copy and private[0][1] is second_copy
    assert model[0][0] is not first_copy and model[0][1] is not second_copy
