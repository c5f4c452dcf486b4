"""Weights that make a rule's mistake show: a copy of a model with unit-scale weights and random biases and norms."""
import copy

import torch


def randomised(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """A copy with weights of unit scale, random biases and LayerNorm weights: a fresh model's small weights keep GELU
    and the attention near-linear and its zero biases absorb nothing, where a wrong rule would hardly show. A copy,
    because load_model's models are shared by the whole process: randomising one in place changed the tiny BERT under
    every later test that had it loaded (tests/attribution/test_state_leak_shared_model.py)."""
    model = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            if parameter.dim() == 2:
                parameter.copy_(noise / parameter.shape[1] ** 0.5)
            elif name.endswith("bias") or "LayerNorm.weight" in name or "layer_norm.weight" in name:
                parameter.copy_(parameter + 0.3 * noise)
    return model.eval()
