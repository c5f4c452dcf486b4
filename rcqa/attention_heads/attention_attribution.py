"""Attention attribution (Hao et al., AAAI 2021): Integrated Gradients over one layer's attention probabilities,
scaled from 0 to A, the rest of the model run as it is: Attr_h = A_h ⊙ ∫₀¹ ∂F(αA)/∂A_h dα, a tokens × tokens
matrix per head whose total is the head's score.

F is the span's log-likelihood, as the knock-outs read it. The integral is a Gauss–Legendre rule of `steps` nodes
(rcqa.attribution.quadrature), the nodes of a layer in batched forwards and backwards of a private copy of the model
whose attention runs through `scaled_attention` (registered with transformers under its own name, so no existing
implementation changes, and the copy's config is its own), as many rows a batch as the memory budget allows
(rcqa.attention_heads.memory: all 10 rows of a 384-token window at once held +1,211 MB with the default model).
Completeness per layer: Σ Attr = F(A) − F(0), F(0) being F with that layer's attention zeroed (its heads' contexts
zero), which the same copy computes without gradients.
"""
from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from transformers.modeling_utils import AttentionInterface

from rcqa.adapter.calls import config_of
from rcqa.attention_heads.base import HeadScore, Scored, SharedCase, Told
from rcqa.attention_heads.memory import HeadsWindow, attribution_rows, give_back_freed, scoring_budget_mb
from rcqa.attention_heads.scores import HeadCase, layout_of, span_log_likelihood
from rcqa.attribution.cost import FORWARD
from rcqa.attribution.lrp.model import additive_mask
from rcqa.attribution.memory import in_chunks
from rcqa.attribution.quadrature import nodes_and_weights
from rcqa.model import QAModel

ATTENTION = "rcqa_scaled_attention"  # the name the private copy's config dispatches attention by
FAMILIES = ("bert", "roberta", "xlm-roberta", "electra", "distilbert", "albert")  # their attention is dispatched so
STEPS = 8  # Gauss–Legendre nodes a layer


class _Scaling:
    """Shared by every attention module of one private copy: for each forward (start), the attention calls counted
    as they come (call k is block k's: one self-attention a block, ALBERT's shared block included), and at `layer`
    the probabilities scaled row by row of the batch by `alphas`, kept with their gradient where one is taken."""

    def __init__(self) -> None:
        self.start(0, torch.ones(1))

    def start(self, layer: int, alphas: torch.Tensor) -> None:
        self.layer, self.alphas, self.calls = layer, alphas, itertools.count()
        self.attention: torch.Tensor | None = None  # A, batch row 0's (every row has the same below the layer)
        self.scaled: torch.Tensor | None = None  # α A, batch × heads × queries × keys

    def __call__(self, probabilities: torch.Tensor) -> torch.Tensor:
        if next(self.calls) != self.layer:
            return probabilities
        self.attention = probabilities[0].detach()
        self.scaled = self.alphas.to(probabilities.dtype)[:, None, None, None] * probabilities.detach()
        return self.scaled.requires_grad_(torch.is_grad_enabled())


def scaled_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                     attention_mask: torch.Tensor | None, scaling: float | None = None, dropout: float = 0.0,
                     **kwargs) -> tuple[torch.Tensor, None]:
    """transformers' attention-function interface: eager attention (eval mode), its probabilities handed to the
    module's _Scaling where the private copy set one."""
    scaling = query.size(-1) ** -0.5 if scaling is None else scaling
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    mask = additive_mask(attention_mask, scores.dtype)
    probabilities = torch.softmax(scores if mask is None else scores + mask, dim=-1)
    state = getattr(module, "rcqa_scaling", None)
    if state is not None:
        probabilities = state(probabilities)
    return torch.matmul(probabilities, value).transpose(1, 2).contiguous(), None


AttentionInterface.register(ATTENTION, scaled_attention)  # a new name only: no existing implementation changes


@dataclass(frozen=True)
class AttentionAttribution:
    """Per layer and head, the attribution's total (layers × heads); per layer, F(A) − F(0) and Σ attribution (their
    gap is the rule's error)."""

    heads: np.ndarray
    f_difference: np.ndarray
    attribution_sum: np.ndarray

    @property
    def completeness_gap(self) -> np.ndarray:
        """Per layer, |Σ attribution − (F(A) − F(0))| / |F(A) − F(0)|."""
        return np.abs(self.attribution_sum - self.f_difference) / np.maximum(np.abs(self.f_difference), 1e-12)


def _private_copy(model: torch.nn.Module, state: _Scaling) -> torch.nn.Module:
    weights = {id(tensor): tensor for tensor in itertools.chain(model.parameters(), model.buffers())}
    private = copy.deepcopy(model, memo=weights).eval()
    config_of(private)._attn_implementation = ATTENTION
    for module in private.modules():
        setattr(module, "rcqa_scaling", state)  # an attribute of our own, which the registered attention reads
    return private


def attention_attribution(qa_model: QAModel, case: HeadCase, steps: int = STEPS,
                          on_block: Callable[[int], None] | None = None,
                          memory_budget_mb: float | None = None) -> AttentionAttribution:
    """Hao et al.'s attention attribution of the case's span log-likelihood at every head of every layer;
    on_block(blocks done) told after each. The rows of a layer go in batches within `memory_budget_mb` (default:
    the explanations' budget on the model's device, rcqa.attention_heads.memory.scoring_budget_mb), each batch
    followed by a checkpoint (rcqa.attribution.memory.checkpoint); the integral is summed in float64, so the
    batches change nothing but float32's rounding of each row."""
    family = qa_model.config.model_type
    if family not in FAMILIES:
        raise ValueError(f"rcqa attributes attention for {', '.join(FAMILIES)} models, not {family}: its attention "
                         "is not computed where rcqa can scale it")
    layout = layout_of(qa_model, case)
    device = qa_model.device
    budget = scoring_budget_mb(device) if memory_budget_mb is None else memory_budget_mb
    window = HeadsWindow.of(qa_model, case.inputs["input_ids"].shape[1])
    nodes, weights = nodes_and_weights("gausslegendre", steps)
    alphas = torch.tensor(nodes, dtype=torch.float32, device=device)
    node_weights = torch.as_tensor(weights, dtype=torch.float64, device=device)
    one = {key: value.to(device) for key, value in case.inputs.items()}
    state = _Scaling()
    private = _private_copy(qa_model.model, state)

    def log_likelihood(rows: int) -> torch.Tensor:
        output = private(**{key: value.repeat(rows, 1) for key, value in one.items()})
        return span_log_likelihood(output.start_logits, output.end_logits, case.span)

    heads, differences, sums = [], [], []
    for layer in range(layout.layers):
        state.start(layer, torch.tensor([0.0, 1.0], device=device))  # F(0) and F(A): no gradient taken
        with torch.no_grad():
            ends = log_likelihood(2)
        assert state.attention is not None  # the forward passed the layer
        attention, integral = state.attention, torch.zeros(state.attention.shape, dtype=torch.float64, device=device)

        def run(begin: int, end: int) -> None:
            nonlocal integral
            give_back_freed()  # the batch before's tensors are gone: their pages too
            state.start(layer, alphas[begin:end])
            with torch.enable_grad():
                f = log_likelihood(end - begin)
                assert state.scaled is not None
                (gradient,) = torch.autograd.grad(f.sum(), state.scaled)
            summed = integral  # assigned once the batch is done: a batch that runs out of memory adds nothing
            for row in range(end - begin):  # one row in float64 at a time: a batch's copy would pass its budget
                summed = summed + node_weights[begin + row] * gradient[row].double()
            integral = summed

        in_chunks(steps, attribution_rows(window, layer, steps, budget), run, device)
        attribution = attention.double() * integral  # heads × queries × keys
        heads.append(attribution.sum(dim=(1, 2)))
        differences.append(float(ends[1] - ends[0]))
        sums.append(float(attribution.sum()))
        if on_block is not None:
            on_block(layer + 1)
    return AttentionAttribution(torch.stack(heads).cpu().numpy(), np.array(differences), np.array(sums))


class AttentionAttributionHeads(HeadScore):
    name = "attention_attribution"
    label = "Attention attribution (Hao et al.)"
    short = "attention attribution"
    description = "attention attribution, IG over its attention probabilities (Hao et al. 2021)"
    predicts = "drop"
    step = "attention attribution of every head"
    measured_seconds = 2.7

    def passes(self, layers: int, heads: int) -> float:
        """Per layer l, STEPS + 2 rows (the rule's nodes, F(0), F(A)) forward through every block and backward
        through the L − l blocks from it up."""
        backward_blocks = layers * (layers + 1) / 2
        return (STEPS + 2) * (layers * layers * FORWARD + (1 - FORWARD) * backward_blocks)

    def memory_bytes(self, window: HeadsWindow, budget_mb: float) -> int:
        """The layer's A and the integral in float64, beside F(0) and F(A) without gradients or the largest batch of
        rows with them (rcqa.attention_heads.memory)."""
        ends = 2 * window.bytes(1)
        kept = 3 * window.maps_bytes
        rows = max(attribution_rows(window, layer, STEPS, budget_mb) * window.bytes(window.layers - layer)
                   for layer in range(window.layers))
        return kept + max(ends, rows)

    def score(self, shared: SharedCase, told: Told) -> Scored:
        layers = layout_of(shared.qa_model, shared.case).layers
        attributed = attention_attribution(shared.qa_model, shared.case, on_block=lambda done: told(
            done / layers, f"attention attribution: block {done} of {layers}"))
        return Scored(attributed.heads, {"completeness": {
            "f_difference": attributed.f_difference.tolist(), "attribution_sum": attributed.attribution_sum.tolist(),
            "gap": attributed.completeness_gap.tolist()}})
