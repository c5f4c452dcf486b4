"""AttnLRP's relevance per attention head, from the same single pass that gives every layer's: in the private
rule-modified copy (rcqa.attribution.lrp.model.rule_copy), each block's attention output projection keeps the
context it is called with (the heads' A·V, concatenated) and its output; one backward pass of F (the span's
log-likelihood, as the knock-outs read) gives the rule-modified gradient at both, and a head's relevance is
Σ context ⊙ gradient over the window's tokens and the head's slice of dims.

What a layer's heads hold, together, is what reached its projection's output less the share the ε-rule absorbs
there (R_in = Σ_j (y_j − b_j) R_out,j / (y_j + ε sign y_j): the bias's share and the stabiliser's); `entering`
(the projection output's relevance) and `absorbed` (that share) are kept per layer, so Σ heads + absorbed =
entering is checked as the layers' conservation is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rcqa.adapter.copies import StandIn
from rcqa.adapter.structure import block_lists
from rcqa.attention_heads.base import HeadScore, Scored, SharedCase, Told
from rcqa.attention_heads.gates import OUTPUT_PROJECTIONS
from rcqa.attention_heads.memory import LRP_SHARE, HeadsWindow
from rcqa.attention_heads.scores import HeadCase, layout_of
from rcqa.attribution.lrp.model import RuleLinear, rule_copy
from rcqa.attribution.lrp.rules import Ledger, stabilised
from rcqa.attribution.stack import find_blocks
from rcqa.attribution.targets import Target
from rcqa.model import QAModel


@dataclass(frozen=True)
class HeadRelevance:
    """Per layer and head, the AttnLRP relevance of F at the head's context (layers × heads); per layer, the
    relevance at the attention output projection's output (entering) and the share the ε-rule absorbed there."""

    heads: np.ndarray
    entering: np.ndarray
    absorbed: np.ndarray

    @property
    def conservation_gap(self) -> np.ndarray:
        """Per layer, |Σ heads + absorbed − entering| as a share of the relevance that moves there (Σ |heads| +
        |absorbed| + |entering|): 0 where the heads hold what reached the layer, float32's rounding aside."""
        moved = np.abs(self.heads).sum(axis=1) + np.abs(self.absorbed) + np.abs(self.entering)
        return np.abs(self.heads.sum(axis=1) + self.absorbed - self.entering) / np.maximum(moved, 1e-30)


class _Keeper(StandIn):
    """Stands in for a projection of the private copy: keeps each call's input and output, in call order."""

    def __init__(self, projection: RuleLinear, calls: list[tuple[torch.Tensor, torch.Tensor]]):
        super().__init__(projection)
        self.calls = calls

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        output = self.module(context)
        self.calls.append((context, output))
        return output


class _Leaf(StandIn):
    """Stands in for the copy's first block: the states of its first call become a leaf of the graph (the model's
    weights need not require gradients; the backward stops there). ALBERT's one block is called again at every
    depth, and those calls keep their graph."""

    def __init__(self, block: torch.nn.Module):
        super().__init__(block)
        self.called = False

    def forward(self, *args, **kwargs):
        if not self.called:
            self.called = True
            if args:
                args = (args[0].detach().requires_grad_(True), *args[1:])
            else:
                kwargs["hidden_states"] = kwargs["hidden_states"].detach().requires_grad_(True)
        return self.module(*args, **kwargs)


def head_relevance(qa_model: QAModel, case: HeadCase) -> HeadRelevance:
    """AttnLRP's relevance of the span's log-likelihood at every head of every layer of the case's window."""
    layout = layout_of(qa_model, case)  # refuses, in one sentence, a family whose heads cannot be cut apart
    calls: list[tuple[torch.Tensor, torch.Tensor]] = []
    private = rule_copy(qa_model.model, Ledger())
    for block in dict.fromkeys(find_blocks(private)):  # ALBERT's shared block once: its keeper records every call
        for name, module in list(block.named_modules()):
            if isinstance(module, RuleLinear) and any(name == p or name.endswith("." + p) for p in OUTPUT_PROJECTIONS):
                parent, _, last = name.rpartition(".")
                (block.get_submodule(parent) if parent else block)._modules[last] = _Keeper(module, calls)
    _, first = next((blocks, blocks) for _, blocks in block_lists(private))
    first[0] = _Leaf(first[0])
    target = Target("span_log_prob", case.span.start_token, case.span.end_token)
    inputs = {key: value.to(qa_model.device) for key, value in case.inputs.items()}
    with torch.enable_grad():
        output = private(**inputs)
        value = target(output.start_logits, output.end_logits).sum()
        gradients = torch.autograd.grad(value, [tensor for call in calls for tensor in call], allow_unused=True)
    heads, entering, absorbed = [], [], []
    for index, ((context, out), projection) in enumerate(zip(calls, layout.projections)):
        at_context, at_output = gradients[2 * index], gradients[2 * index + 1]
        relevance = (context * at_context).detach()[0]  # tokens × (heads · head_dim)
        heads.append(relevance.unflatten(-1, (layout.heads, layout.head_dim)).sum(dim=(0, 2)).double())
        received, y = (out * at_output).detach()[0].double(), out.detach()[0].double()
        bias = projection.bias.double() if projection.bias is not None else torch.zeros_like(y[0])
        entering.append(received.sum())
        absorbed.append((received * (1 - (y - bias) / stabilised(y))).sum())
    return HeadRelevance(torch.stack(heads).cpu().numpy(), torch.stack(entering).cpu().numpy(),
                         torch.stack(absorbed).cpu().numpy())


class AttnLRPHeads(HeadScore):
    name = "attnlrp"
    label = "AttnLRP relevance"
    short = "AttnLRP"
    description = "AttnLRP relevance at the head's context"
    predicts = "drop"
    step = "AttnLRP relevance of every head"
    measured_seconds = 0.45

    def passes(self, layers: int, heads: int) -> float:
        return layers  # one forward and one backward through every block, of the rule-modified copy

    def memory_bytes(self, window: HeadsWindow, budget_mb: float) -> int:
        return int(LRP_SHARE * window.bytes(window.layers))

    def score(self, shared: SharedCase, told: Told) -> Scored:
        relevance = head_relevance(shared.qa_model, shared.case)
        told(1.0, self.step)
        return Scored(relevance.heads, {"conservation": {
            "entering": relevance.entering.tolist(), "absorbed": relevance.absorbed.tolist(),
            "gap": relevance.conservation_gap.tolist()}})
