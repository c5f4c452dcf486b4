"""An independent reference for layer IG: Captum's IntegratedGradients on the whole Hugging Face model,
with a forward hook that swaps the output of the chosen layer module for the path point."""
from __future__ import annotations

import torch
from captum.attr import IntegratedGradients

from rcqa.attribution.engine import path_gradients
from rcqa.attribution.quadrature import nodes_and_weights
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.targets import Target


def layer_module(model: torch.nn.Module, layer: int) -> torch.nn.Module:
    """BERT-family layer l: 0 is the embeddings, l ≥ 1 the output of encoder block l − 1."""
    base = model.base_model
    return base.embeddings if layer == 0 else base.encoder.layer[layer - 1]


def layer_output(model: torch.nn.Module, inputs: dict, layer: int) -> torch.Tensor:
    captured = {}
    handle = layer_module(model, layer).register_forward_hook(lambda m, a, out: captured.setdefault("h", out))
    try:
        with torch.no_grad():
            model(**inputs)
    finally:
        handle.remove()
    return captured["h"]


def captum_layer_ig(model: torch.nn.Module, inputs: dict, layer: int, baseline: torch.Tensor,
                    target_fn, method: str, steps: int) -> torch.Tensor:
    """IG of target_fn(start_logits, end_logits) w.r.t. the output of layer, via Captum."""
    x = layer_output(model, inputs, layer)

    def forward(hidden: torch.Tensor) -> torch.Tensor:
        handle = layer_module(model, layer).register_forward_hook(lambda m, a, out: hidden)
        try:
            batch = {k: v.expand(hidden.shape[0], -1) for k, v in inputs.items()}
            output = model(**batch)
        finally:
            handle.remove()
        return target_fn(output.start_logits, output.end_logits)

    return IntegratedGradients(forward).attribute(x, baselines=baseline, method=method, n_steps=steps)[0]


def max_relative_difference(ours: torch.Tensor, reference: torch.Tensor) -> float:
    """max |ours − reference| over max |reference|: relative to the attribution's scale."""
    return float((ours - reference).abs().max() / reference.abs().max().clamp_min(1e-12))


def integrate(stack: LayerStack, layer: int, x: torch.Tensor, x_base: torch.Tensor, targets: list[Target],
              rule: str, steps: int, memory_budget_mb: int) -> list[torch.Tensor]:
    """(x − x') ⊙ Σ_k w_k ∇F(x' + α_k (x − x')) for each target, with one rule over the whole path, on the engine's
    batched gradients (rcqa.attribution.engine.path_gradients) without its panels or completeness checks."""
    alphas, weights = nodes_and_weights(rule, steps)
    gradients = path_gradients(stack, layer, x, x_base, targets, alphas, weights[:, None], memory_budget_mb)
    return [((x - x_base) * g[0])[0] for g in gradients]
