"""Layer-wise Integrated Gradients at the output of every layer, in one prefix-cached call.

One forward pass caches every layer's hidden states H_l (and, for an input baseline, the baseline's).
For layer l, only the blocks above l and the QA head run, on a batch of path points at once, split
into chunks that fit a memory budget and are expected to take at most CHECKPOINT_SECONDS; targets that share the forward share it, each with one
backward. Each layer is checked for completeness; the path is integrated by rcqa.attribution.path (adaptive
Gauss–Legendre panels by default). Results stream layer by layer.

The layer loop (iter_layers) runs over a Scope: one window (WindowScope, the prefix-cached fast path) or every
window of the passage at once (rcqa.attribution.passage.PassageScope); rcqa.attribution.explanation is the one
pipeline that explains through it.
"""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from rcqa.attribution.memory import CHECKPOINT_SECONDS, attention_heads, budget_mb, in_chunks, point_bytes
from rcqa.attribution.path import Integral, Path, integrate_path
from rcqa.types.settings import ExplainSettings
from rcqa.attribution.speed import points_within
from rcqa.attribution.stack import LayerStack, same_calls
from rcqa.attribution.targets import Target
from rcqa.attribution.window import baseline_stack, on_device
from rcqa.model import QAModel
from rcqa.types import AGGREGATIONS, Completeness

@dataclass
class LayerResult:
    """One layer's attributions, as streamed: scores (targets × aggregations × tokens)."""

    layer: int
    label: str
    scores: np.ndarray
    completeness: list[Completeness]
    seconds: float


class Scope(Protocol):
    """The states a layer loop explains: one window or the whole passage, with the targets read on them."""

    targets: list[Target]

    @property
    def labels(self) -> list[str]: ...

    def path(self, layer: int, settings: ExplainSettings) -> Path:
        """The path at the layer, as rcqa.attribution.path integrates it (with its difference x − x')."""

    def layer_scores(self, attributions: list[torch.Tensor],
                     completeness: list[Completeness]) -> tuple[np.ndarray, list[Completeness]]:
        """Each target's token scores (targets × aggregations × tokens) and its completeness checks."""

    def kept_states(self) -> tuple[np.ndarray, list[int] | None]:
        """The layer outputs a result keeps (layers × tokens × dim) and which of its tokens they are (None: all)."""


def iter_layers(scope: Scope, settings: ExplainSettings, layers: Sequence[int] | None = None) -> Iterator[LayerResult]:
    """Attribute every layer (or only `layers`), from the embeddings up, yielding each as soon as it is done."""
    for layer in range(len(scope.labels)) if layers is None else layers:
        started = time.perf_counter()
        path = scope.path(layer, settings)
        attributions, completeness = layer_attributions(layer, path.difference, integrate_path(path, settings),
                                                        scope.targets)
        scores, completeness = scope.layer_scores(attributions, completeness)
        yield LayerResult(layer, scope.labels[layer], scores, completeness, time.perf_counter() - started)


@dataclass
class WindowScope:
    """One window: its prefix-cached stack, its input baseline's (None for the zero baseline) and the targets."""

    stack: LayerStack
    baseline: LayerStack | None
    targets: list[Target]

    @classmethod
    def of(cls, qa_model: QAModel, inputs: dict[str, torch.Tensor], targets: list[Target], baseline: str,
           stack: LayerStack | None = None) -> WindowScope:
        """The window of `inputs` (its stack, when one was already run, given as `stack`)."""
        stack = stack or LayerStack(qa_model.model, on_device(inputs, qa_model.device))
        return cls(stack, baseline_stack(qa_model, inputs, baseline), targets)

    @property
    def labels(self) -> list[str]:
        return self.stack.labels

    def path(self, layer: int, settings: ExplainSettings) -> _WindowPath:
        x = self.stack.hidden[layer]
        x_base = self.baseline.hidden[layer] if self.baseline else torch.zeros_like(x)
        return _WindowPath(self.stack, self.baseline, layer, x, x_base, self.targets, settings.memory_budget_mb)

    def layer_scores(self, attributions: list[torch.Tensor],
                     completeness: list[Completeness]) -> tuple[np.ndarray, list[Completeness]]:
        return np.stack([aggregate(a) for a in attributions]), completeness

    def kept_states(self) -> tuple[np.ndarray, None]:
        """The layer outputs a result keeps (layers × tokens × dim), the window's tokens being all of its own."""
        return torch.cat(self.stack.hidden).cpu().numpy(), None


def layer_attributions(layer: int, difference: torch.Tensor, integral: Integral,
                       targets: list[Target]) -> tuple[list[torch.Tensor], list[Completeness]]:
    """Per target, the tokens × dim attributions (x − x') ⊙ Σ w ∇F and the layer's completeness check."""
    attributions = [(difference * integral.gradients[t])[0] for t in range(len(targets))]
    completeness = [Completeness(layer=layer, target=target.name, steps=integral.steps,
                                 f_input=float(integral.f_input[t]), f_baseline=float(integral.f_baseline[t]),
                                 attribution_sum=float(attributions[t].sum()))
                    for t, target in enumerate(targets)]
    return attributions, completeness


@dataclass
class _WindowPath:
    """The path at one layer of one window: what rcqa.attribution.path.integrate_path asks of it."""

    stack: LayerStack
    baseline: LayerStack | None  # the input baseline's states; None for the zero baseline
    layer: int
    x: torch.Tensor
    x_base: torch.Tensor
    targets: list[Target]
    memory_budget_mb: int

    @property
    def difference(self) -> torch.Tensor:
        return self.x - self.x_base

    def ends(self) -> torch.Tensor:
        at_baseline = baseline_logits(self.stack, self.baseline, self.layer)
        return torch.cat([self._at(at_baseline) if at_baseline else self.values([0.0]),
                          self._at((self.stack.start_logits, self.stack.end_logits))], dim=1)

    def _at(self, logits: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return torch.stack([t(*logits) for t in self.targets]).cpu()

    def values(self, alphas) -> torch.Tensor:
        return _values(self.stack, self.layer, self.x, self.x_base, self.targets, alphas)

    def gradients(self, alphas: np.ndarray, weights: np.ndarray) -> torch.Tensor:
        return path_gradients(self.stack, self.layer, self.x, self.x_base, self.targets, alphas, weights,
                              self.memory_budget_mb)


def baseline_logits(stack: LayerStack, baseline: LayerStack | None,
                    layer: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The baseline input's start and end logits, which are the model's at α = 0 of the path at `layer` when the
    blocks above it were called for the baseline as for the input; None for the zero baseline or where they were
    not (F there is then run from the layer)."""
    if baseline is None or not same_calls(stack, baseline, layer):
        return None
    return baseline.start_logits, baseline.end_logits


def _values(stack: LayerStack, layer: int, x: torch.Tensor, x_base: torch.Tensor, targets: list[Target],
            alphas) -> torch.Tensor:
    """(targets × points): F at x' + α (x − x'), forward only."""
    alpha = torch.as_tensor(np.asarray(alphas), dtype=x.dtype, device=x.device)
    with torch.no_grad():
        start, end = stack.run_from(layer, x_base + alpha[:, None, None] * (x - x_base))
        return torch.stack([t(start, end) for t in targets]).cpu()


def path_gradients(stack: LayerStack, layer: int, x: torch.Tensor, x_base: torch.Tensor, targets: list[Target],
                   alphas: np.ndarray, weights: np.ndarray, memory_budget_mb: int) -> torch.Tensor:
    """targets × sums × 1 × tokens × dim: for each column j of weights (path points × sums),
    Σ_k weights[k, j] ∇F(x' + α_k (x − x')). All points run as one batch, split into chunks (chunk_size) that
    fit the memory budget (on a GPU, its free memory; halved on out-of-memory); every target is one backward
    through the same forward."""
    alpha_values = torch.as_tensor(alphas, dtype=x.dtype, device=x.device)
    weight_values = torch.as_tensor(weights, dtype=x.dtype, device=x.device)
    difference = x - x_base
    sums = x.new_zeros((len(targets), weights.shape[1], *x.shape))

    def chunk_sums(begin: int, end: int) -> None:
        alpha, weight = alpha_values[begin:end], weight_values[begin:end]
        path = (x_base + alpha[:, None, None] * difference).requires_grad_(True)
        with torch.enable_grad():
            start, end_logits = stack.run_from(layer, path)
            found = []
            for i, target in enumerate(targets):
                (gradient,) = torch.autograd.grad(target(start, end_logits).sum(), path,
                                                  retain_graph=i < len(targets) - 1)
                found.append(torch.einsum("ks,ktd->std", weight, gradient)[:, None])
        for i, chunk_sum in enumerate(found):  # added only once every target's backward fitted
            sums[i] += chunk_sum

    chunk = chunk_size(stack, layer, x, budget_mb(x.device, memory_budget_mb), len(targets))
    in_chunks(len(alphas), chunk, chunk_sums, x.device)
    return sums


def chunk_size(stack: LayerStack, layer: int, x: torch.Tensor, memory_budget_mb: float, targets: int) -> int:
    """Path points per batch so that the activations kept for backward stay within the budget, and the batch, a
    backward for each of `targets`, is expected to take at most CHECKPOINT_SECONDS on this server (the cost
    model's seconds): sized by memory alone, a chunk of the default model's window with 3 targets took 30 s on 2
    cores, and a worker reaches a checkpoint (to stop, or to run a short job) only between chunks."""
    tokens, dim = x.shape[1], x.shape[2]
    blocks = max(1, stack.num_layers - layer)
    one_point = point_bytes(tokens, dim, attention_heads(stack.model.config), blocks)
    by_memory = max(1, int(memory_budget_mb * 2**20 // one_point))
    return min(by_memory, points_within(CHECKPOINT_SECONDS, blocks, targets, tokens, dim))


def aggregate(attribution: torch.Tensor) -> np.ndarray:
    """tokens × dim → (aggregations × tokens), in the order of AGGREGATIONS. In float64: where a path leaves the
    model's range (the zero baseline under LayerNorm) attributions reach 1e24, whose squares overflow float32."""
    attribution = attribution.detach().double()
    norm = attribution.norm(dim=-1)
    by_name = {"l2": norm, "sum": attribution.sum(-1), "abs_sum": attribution.abs().sum(-1), "l2_squared": norm**2}
    return torch.stack([by_name[name] for name in AGGREGATIONS]).cpu().numpy()
