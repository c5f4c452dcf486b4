"""Gates on attention heads: a private copy of a model in which each block's attention output projection reads its
heads' context vectors (A·V, one slice of head_dim per head) scaled by a gate.

A gate g of head h at layer l mixes the head's context with a fill: g · c_h + (1 − g) · fill_h, where fill is zero
(the head knocked out, as zeroing the head's columns of the projection would) or the head's mean context over the
window's passage tokens (its output made uninformative but kept on its usual scale). All gates 1 is the model
itself; the gates are a tensor batch × layers × heads, so one forward knocks out a different head in each row, and
a gradient with respect to them is Michel et al.'s head importance.

The shared model is never changed: the copy (rcqa.adapter.copies.with_replacements) shares its weights and replaces only
the projections, so another thread may run the model meanwhile.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from rcqa.adapter.calls import config_of
from rcqa.adapter.copies import ModuleT, StandIn, with_replacements

# where a block keeps the linear map from its heads' concatenated contexts back to the hidden size (the end of its
# name), by family: BERT, RoBERTa, XLM-R, ELECTRA, DeBERTa-v2 and the embedded MiniLM; DistilBERT; MPNet; ALBERT
OUTPUT_PROJECTIONS = ("attention.output.dense", "attention.out_lin", "attention.attn.o", "attention.dense")
FILLS = {"zero": "the head's context set to zero (knocked out)",
         "mean": "the head's context replaced by its mean over the window's passage tokens"}


@dataclass(frozen=True)
class HeadLayout:
    """Each block's attention output projection, in the order the blocks run, and the heads that feed it."""

    projections: tuple[torch.nn.Linear, ...]
    heads: int
    head_dim: int

    @property
    def layers(self) -> int:
        return len(self.projections)


def head_layout(model: torch.nn.Module, blocks: list[torch.nn.Module], calls: int) -> HeadLayout:
    """The projection each of the model's `calls` block calls runs (blocks: its distinct blocks in order; ALBERT's
    one shared group runs at every depth); a ValueError in one sentence, naming the family, where heads cannot be
    cut apart this way."""
    family = config_of(model).model_type
    projections = [_projection(block) for block in blocks]
    found = [projection for projection in projections if projection is not None]
    if len(found) < len(projections):
        raise ValueError(f"rcqa cannot score the attention heads of a {family} model: its blocks have no single "
                         f"attention output projection where rcqa looks ({', '.join(OUTPUT_PROJECTIONS)})")
    if len(found) == 1 and calls > 1:  # one shared block (ALBERT) called at every depth
        found = found * calls
    if len(found) != calls:
        raise ValueError(f"rcqa cannot score the attention heads of a {family} model: its {len(found)} blocks run "
                         f"{calls} times in an order rcqa cannot follow head by head")
    heads: int = config_of(model).num_attention_heads
    return HeadLayout(tuple(found), heads, found[0].in_features // heads)


def _projection(block: torch.nn.Module) -> torch.nn.Linear | None:
    """The block's one Linear whose name ends with one of OUTPUT_PROJECTIONS (None if none, or several)."""
    found = [module for name, module in block.named_modules() if isinstance(module, torch.nn.Linear)
             and any(name == path or name.endswith("." + path) for path in OUTPUT_PROJECTIONS)]
    return found[0] if len(found) == 1 else None


class _GatedProjection(StandIn):
    """Stands in for one output projection: its input's head slices mixed with their fill by the gates of the
    layer being run (`layers`: the layers it runs at, in order; a shared block's projection runs at several, so
    each call of this private stand-in takes the next)."""

    def __init__(self, projection: torch.nn.Linear, layers: list[int], layout: HeadLayout, gates: torch.Tensor,
                 fill: str, passage_mask: torch.Tensor | None):
        super().__init__(projection)
        self.layers, self.layout, self.gates, self.fill, self.passage_mask = layers, layout, gates, fill, passage_mask
        self.calls = 0

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        layer = self.layers[self.calls % len(self.layers)]
        self.calls += 1
        heads = context.unflatten(-1, (self.layout.heads, self.layout.head_dim))  # batch × tokens × heads × dim
        gate = self.gates[:, layer, :, None].to(heads.dtype)[:, None]  # batch × 1 × heads × 1
        mixed = gate * heads
        if self.fill == "mean":
            assert self.passage_mask is not None  # gated_copy refuses "mean" without it
            mask = self.passage_mask[:, :, None, None].to(heads.dtype)  # batch × tokens × 1 × 1
            mean = (heads * mask).sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True).clamp(min=1)
            mixed = mixed + (1 - gate) * mean
        return self.module(mixed.flatten(-2))


def gated_model(model: ModuleT, layout: HeadLayout, gates: torch.Tensor, fill: str = "zero",
                passage_mask: torch.Tensor | None = None) -> ModuleT:
    """A private copy of model whose heads are gated by gates (batch × layers × heads, the batch the copy will be
    run with), for one forward; passage_mask (batch × tokens, 1 on the passage's tokens) is needed for the "mean"
    fill."""
    if fill not in FILLS:
        raise ValueError(f"unknown fill {fill!r}; choose one of {', '.join(FILLS)}")
    if fill == "mean" and passage_mask is None:
        raise ValueError("the mean fill needs the window's passage mask")
    if gates.shape[1:] != (layout.layers, layout.heads):
        raise ValueError(f"gates must be batch × {layout.layers} layers × {layout.heads} heads, not "
                         f"{tuple(gates.shape)}")
    layers: dict[torch.nn.Linear, list[int]] = {}
    for layer, projection in enumerate(layout.projections):
        layers.setdefault(projection, []).append(layer)
    return with_replacements(model, {projection: _GatedProjection(projection, at, layout, gates, fill, passage_mask)
                                     for projection, at in layers.items()})


def knock_out_each(layout: HeadLayout) -> torch.Tensor:
    """Gates for one forward that knocks out every head in turn: row layer × heads + head has that head's gate 0,
    every other 1 ((layers · heads) × layers × heads)."""
    count = layout.layers * layout.heads
    return (1 - torch.eye(count)).reshape(count, layout.layers, layout.heads)
