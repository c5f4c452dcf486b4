"""The model cut at its layer outputs: one forward caches H_0 (embeddings) … H_L, and the function "the layers above
l and the QA head" can then be run on a batch of states at layer l.

Two paths, as the model's adapter (rcqa.adapter) says. The fast one runs only the suffix: the blocks above l,
called exactly as the model called them (the extra arguments each block received, the attention mask and the
like, are recorded once and replayed), then what runs after the last block (a final norm) and the linear QA head.
The general one runs the model's own forward, with block l's output (the embeddings': block 0's input) replaced by
the states, as Captum's layer methods do: slower, since the blocks below run again, but right for any model (an
encoder-decoder, global attention, a head that reads more than the last states).

The model is shared by every thread of the process (answers, other explanations), so neither path touches it: each
runs a private shallow copy of the model whose block lists hold wrappers around the shared blocks. Hooks on the
shared blocks would also fire for any other thread's forward that ran at the same time, and registering or removing
them races with forwards in flight.
"""
from __future__ import annotations

import itertools

import torch

from rcqa.adapter.calls import Call, first, with_first, without_cache
from rcqa.adapter.copies import Recorder, StandIn, with_replacements
from rcqa.adapter.discovery import adapter_of
from rcqa.adapter.model_adapter import ModelAdapter
from rcqa.adapter.structure import block_lists


def find_blocks(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The model's blocks, in the order of their lists (rcqa.adapter.structure.block_lists)."""
    return [block for _, blocks in block_lists(model) for block in blocks]


def layer_labels(num_layers: int) -> list[str]:
    """'embeddings' then 'block 0' … : block l is the paper's 'layer l' (the output of encoder block l)."""
    return ["embeddings"] + [f"block {i}" for i in range(num_layers)]


class _Switch(StandIn):
    """Stands in for one shared block in a private copy: on the chosen call of all the copy's blocks (a shared
    counter), it is called with `states` instead of its hidden states (layer 0), or returns them in place of its
    own (layer l ≥ 1: block l − 1's output). A model that pads inside its forward (Longformer, to its attention
    window) keeps its padding: only the states' tokens are replaced."""

    def __init__(self, block: torch.nn.Module, counter: itertools.count, layer: int, states: torch.Tensor,
                 adapter: ModelAdapter):
        super().__init__(block)
        self.counter, self.layer, self.states, self.adapter = counter, layer, states, adapter

    def forward(self, *args, **kwargs):
        index = next(self.counter)
        if index == 0 and self.layer == 0:  # every argument that is the hidden states (Funnel: query, key, value)
            hidden = args[0] if args else kwargs["hidden_states"]
            states = self._replaced(hidden)
            args = tuple(states if a is hidden else a for a in args)
            kwargs = {k: states if v is hidden else v for k, v in kwargs.items()}
        output = self.module(*args, **kwargs)
        if index == self.layer - 1:
            return with_first(output, self._replaced(first(output)))
        return output

    def _replaced(self, hidden: torch.Tensor) -> torch.Tensor:
        own = self.adapter.standard(hidden)
        tokens = self.states.shape[1]
        states = self.states if own.shape[1] == tokens else torch.cat([self.states, own[:, tokens:]], dim=1)
        return self.adapter.native(states)


class LayerStack:
    """Hidden states of one input at every layer, and the function "layers above l + QA head" of each layer."""

    def __init__(self, model: torch.nn.Module, inputs: dict[str, torch.Tensor]):
        self.model = model
        self.inputs = inputs
        self.adapter: ModelAdapter = adapter_of(model, inputs)
        self.calls: list[Call] = []
        self.hidden: list[torch.Tensor] = []  # H_0 … H_L, each 1 × tokens × hidden
        self.groups: dict[int, torch.Tensor] = {}  # a pooled layer's positions × tokens (ModelAdapter.token_groups)
        self.start_logits, self.end_logits = self._capture(inputs)

    @property
    def num_layers(self) -> int:
        return len(self.calls)

    @property
    def labels(self) -> list[str]:
        """'embeddings', then each block call's label (rcqa.adapter)."""
        return list(self.adapter.labels)

    @property
    def fast(self) -> bool:
        return self.adapter.path == "fast"

    def _capture(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        def record(call: Call) -> None:
            if not self.calls:
                self.hidden.append(self._per_token(0, call.hidden))
            self.calls.append(call)
            self.hidden.append(self._per_token(len(self.calls), first(call.output)))

        blocks = [block for blocks in self.adapter.blocks for block in blocks]
        private = with_replacements(self.model, {block: Recorder(block, record) for block in blocks})
        with torch.no_grad():
            output = private(**without_cache(self.model, inputs))
        return output.start_logits, output.end_logits

    def _per_token(self, layer: int, hidden: torch.Tensor) -> torch.Tensor:
        """A layer's states as batch × tokens × dim. Where the model pooled the tokens (Funnel), each token holds the
        state of the position that pools it (zero where none does), and the layer's groups are kept: run_from
        averages each group back into its position, so that IG at the tokens gives each token an equal share of
        its position's attribution and the layer's sum is the positions' sum."""
        tokens = self.inputs["input_ids"].shape[1]
        states = self.adapter.standard(hidden)[:, :tokens].detach()
        if states.shape[1] == tokens:
            return states
        if layer not in self.groups:
            self.groups[layer] = self.adapter.token_groups(tokens, states.shape[1]).to(states)
        return torch.einsum("kt,bkd->btd", (self.groups[layer] > 0).to(states), states)

    def block_input(self, layer: int) -> torch.Tensor:
        """The states block `layer` − 1 was called with, as layer `layer`'s states: run from there, the block is
        skipped. They are layer `layer` − 1's only in a plain chain: an encoder-decoder's first decoder block reads
        the decoder's embeddings, Funnel's pooled block the pooled states, its decoder the upsampled ones."""
        return self._per_token(layer, self.calls[layer - 1].hidden)

    def run_from(self, layer: int, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end logits (batch × tokens) when H_layer is replaced by hidden (batch × tokens × dim); at a
        pooled layer each position's state is the mean of its tokens'."""
        if layer in self.groups:
            hidden = torch.einsum("kt,btd->bkd", self.groups[layer], hidden)
        return self._run_suffix(layer, hidden) if self.fast else self._run_model(layer, hidden)

    def _run_suffix(self, layer: int, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        for call in self.calls[layer:]:
            hidden = first(call.module(hidden, *call.args, **call.kwargs))
        for module in self.adapter.final:
            hidden = first(module(hidden))
        assert self.adapter.head is not None  # the fast path is taken only with a linear QA head (rcqa.adapter)
        start, end = self.adapter.head(hidden).split(1, dim=-1)
        return start.squeeze(-1), end.squeeze(-1)

    def _run_model(self, layer: int, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        counter = itertools.count()
        blocks = [block for blocks in self.adapter.blocks for block in blocks]
        private = with_replacements(self.model, {block: _Switch(block, counter, layer, hidden, self.adapter)
                                                  for block in blocks})
        inputs = {k: v.expand(len(hidden), *v.shape[1:]) for k, v in self.inputs.items()}
        output = private(**without_cache(self.model, inputs))
        return output.start_logits, output.end_logits


def same_calls(one: LayerStack, other: LayerStack, layer: int) -> bool:
    """Whether run_from(layer, ·) of the two stacks is the same function, so that their states can run as one
    batch: on the fast path, states of one shape and blocks above `layer` called with the same extra arguments,
    each of them None or an equal tensor of batch 1 (which broadcasts over any batch); on the general path, equal
    inputs."""
    if one.hidden[layer].shape != other.hidden[layer].shape:
        return False
    if not (one.fast and other.fast):
        return one.inputs.keys() == other.inputs.keys() and all(
            _equal_tensors(one.inputs[k], other.inputs[k]) for k in one.inputs)
    for a, b in zip(one.calls[layer:], other.calls[layer:]):
        if len(a.args) != len(b.args) or a.kwargs.keys() != b.kwargs.keys():
            return False
        if not all(_same_argument(x, y) for x, y in [*zip(a.args, b.args), *((a.kwargs[k], b.kwargs[k])
                                                                             for k in a.kwargs)]):
            return False
    return True


def _same_argument(x, y) -> bool:
    """Equal, or (a tensor) equal and of batch 1; a tuple (rotary cos and sin) element by element."""
    if isinstance(x, tuple) and isinstance(y, tuple):
        return len(x) == len(y) and all(_same_argument(a, b) for a, b in zip(x, y))
    if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
        return _equal_tensors(x, y)
    return x is y or x == y


def _equal_tensors(x, y) -> bool:
    return (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape[:1] == (1,)
            and x.shape == y.shape and torch.equal(x, y))
