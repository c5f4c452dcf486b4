"""The model cut at its layer outputs: one forward caches H_0 (embeddings) … H_L, and any suffix
"blocks above l + QA head" can then be run on a batch of states at layer l without redoing the prefix.

Blocks are found by name and called exactly as the model calls them; the extra arguments each block
received (the attention mask and the like) are captured once by hooks and replayed, so every
architecture the loader supports works without re-implementing its forward pass.
"""
from __future__ import annotations

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
        def before(block, args, kwargs):
            hidden = args[0] if args else kwargs.pop("hidden_states")
            self.hidden.append(hidden.detach())
            self.calls.append(_Call(block, tuple(args[1:]), dict(kwargs)))

        def after(block, args, kwargs, output):
            self._last_output = (output[0] if isinstance(output, tuple) else output).detach()

        blocks = find_blocks(self.model)
        handles = [b.register_forward_pre_hook(before, with_kwargs=True) for b in blocks]
        handles += [b.register_forward_hook(after, with_kwargs=True) for b in blocks]
        try:
            with torch.no_grad():
                output = self.model(**inputs)
        finally:
            for handle in handles:
                handle.remove()
        self.hidden.append(self._last_output)
        del self._last_output
        return output.start_logits, output.end_logits

    def run_from(self, layer: int, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end logits (batch × tokens) when H_layer is replaced by hidden (batch × tokens × dim)."""
        for call in self.calls[layer:]:
            output = call.block(hidden, *call.args, **call.kwargs)
            hidden = output[0] if isinstance(output, tuple) else output
        logits = self.model.qa_outputs(hidden)
        start, end = logits.split(1, dim=-1)
        return start.squeeze(-1), end.squeeze(-1)
