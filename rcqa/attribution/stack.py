"""The model cut at its layer outputs: one forward caches H_0 (embeddings) … H_L, and any suffix
"blocks above l + QA head" can then be run on a batch of states at layer l without redoing the prefix.

Blocks are found by name and called exactly as the model calls them; the extra arguments each block
received (the attention mask and the like) are recorded once and replayed, so every architecture the
loader supports works without re-implementing its forward pass.

The model is shared by every thread of the process (answers, other explanations), so recording never
touches it: it runs a private shallow copy of the model whose block list holds recorders around the
shared blocks. Hooks on the shared blocks would also record any other thread's forward that ran at the
same time, and registering or removing them races with forwards in flight.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch

# where each supported family keeps its blocks, relative to model.base_model
_BLOCK_LISTS = ("encoder.layer", "transformer.layer", "encoder.albert_layer_groups")


@dataclass
class _Call:
    block: torch.nn.Module
    args: tuple  # positional arguments after the hidden states
    kwargs: dict


def find_blocks(model: torch.nn.Module) -> torch.nn.ModuleList:
    for path in _BLOCK_LISTS:
        module = model.base_model
        for name in path.split("."):
            module = getattr(module, name, None)
        if isinstance(module, torch.nn.ModuleList):
            return module
    raise ValueError(f"{type(model).__name__}: no encoder blocks found at {', '.join(_BLOCK_LISTS)}")


def layer_labels(num_layers: int) -> list[str]:
    """'embeddings' then 'block 0' … : block l is the paper's 'layer l' (the output of encoder block l)."""
    return ["embeddings"] + [f"block {i}" for i in range(num_layers)]


class _Recorder(torch.nn.Module):
    """Stands in for one shared block in a private copy of the model: records each call, then makes it."""

    def __init__(self, block: torch.nn.Module, record: Callable[[torch.Tensor, _Call, torch.Tensor], None]):
        super().__init__()
        self.block = block
        self.record = record

    def forward(self, *args, **kwargs):
        hidden = args[0] if args else kwargs.pop("hidden_states")
        output = self.block(hidden, *args[1:], **kwargs)
        self.record(hidden, _Call(self.block, tuple(args[1:]), dict(kwargs)), _first(output))
        return output


def _first(output) -> torch.Tensor:
    return output[0] if isinstance(output, tuple) else output


def _with_blocks(model: torch.nn.Module, blocks: torch.nn.ModuleList,
                 replacements: list[torch.nn.Module]) -> torch.nn.Module:
    """A shallow copy of model running `replacements` in place of `blocks`. Only the modules on the path
    to the block list are copied (their child tables are new); parameters and all other modules are shared."""
    path = next(name for name, module in model.named_modules() if module is blocks).split(".")
    root = parent = _shallow_copy(model)
    for name in path[:-1]:
        child = _shallow_copy(parent._modules[name])
        parent._modules[name] = child
        parent = child
    parent._modules[path[-1]] = torch.nn.ModuleList(replacements)
    return root


def _shallow_copy(module: torch.nn.Module) -> torch.nn.Module:
    clone = copy.copy(module)
    clone.__dict__["_modules"] = dict(module._modules)  # copy.copy would share the child table
    return clone


class LayerStack:
    """Hidden states of one input at every layer, and the suffix function of each layer."""

    def __init__(self, model: torch.nn.Module, inputs: dict[str, torch.Tensor]):
        self.model = model
        self.calls: list[_Call] = []
        self.hidden: list[torch.Tensor] = []  # H_0 … H_L, each 1 × tokens × hidden
        self.start_logits, self.end_logits = self._capture(inputs)

    @property
    def num_layers(self) -> int:
        return len(self.calls)

    def _capture(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        outputs = []

        def record(hidden: torch.Tensor, call: _Call, output: torch.Tensor) -> None:
            self.hidden.append(hidden.detach())
            self.calls.append(call)
            outputs.append(output.detach())

        blocks = find_blocks(self.model)
        private = _with_blocks(self.model, blocks, [_Recorder(block, record) for block in blocks])
        with torch.no_grad():
            output = private(**inputs)
        self.hidden.append(outputs[-1])
        return output.start_logits, output.end_logits

    def run_from(self, layer: int, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end logits (batch × tokens) when H_layer is replaced by hidden (batch × tokens × dim)."""
        for call in self.calls[layer:]:
            hidden = _first(call.block(hidden, *call.args, **call.kwargs))
        logits = self.model.qa_outputs(hidden)
        start, end = logits.split(1, dim=-1)
        return start.squeeze(-1), end.squeeze(-1)


def same_calls(one: LayerStack, other: LayerStack, layer: int) -> bool:
    """Whether two stacks' blocks above `layer` take states of one shape and were called with the same extra
    arguments, each of them None or an equal tensor of batch 1 (which broadcasts over any batch): then run_from of
    either is the same function, and their states can run as one batch."""
    if one.hidden[layer].shape != other.hidden[layer].shape:
        return False
    for a, b in zip(one.calls[layer:], other.calls[layer:]):
        values = [*zip(a.args, b.args), *((a.kwargs[k], b.kwargs.get(k)) for k in a.kwargs)]
        if len(a.args) != len(b.args) or a.kwargs.keys() != b.kwargs.keys():
            return False
        for x, y in values:
            if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
                if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape[:1] == (1,)
                        and x.shape == y.shape and torch.equal(x, y)):
                    return False
            elif x is not y and x != y:
                return False
    return True
