"""One call of a module as recorded (Call), and how a module's output and a model's inputs and config are read: the
hidden states out of whatever a block returns, and put back into it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class Call:
    """One recorded call of a module: the hidden states it was given, the rest of its arguments, its output."""

    module: torch.nn.Module
    hidden: torch.Tensor
    args: tuple  # positional arguments after the hidden states
    kwargs: dict
    output: object

    @property
    def hidden_out(self) -> torch.Tensor:
        return first(self.output)


def first(output) -> torch.Tensor:
    """A module's hidden states out of whatever it returns: a tensor, a tuple led by them, or a dict of them first
    (SqueezeBERT's feature map)."""
    if isinstance(output, dict):
        return next(iter(output.values()))
    return output[0] if isinstance(output, (tuple, list)) else output


def with_first(output, hidden: torch.Tensor):
    """The block's output with its hidden states replaced (the same kind of container as it returned)."""
    if isinstance(output, dict):
        return {**output, next(iter(output)): hidden}
    return (hidden, *output[1:]) if isinstance(output, (tuple, list)) else hidden


def without_cache(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> dict:
    """The inputs, with use_cache=False where the model keeps a key-value cache: a cache recorded as a block's
    argument would grow on every replay."""
    return {**inputs, "use_cache": False} if getattr(model.config, "use_cache", False) else inputs


def config_of(model: torch.nn.Module) -> Any:
    """A transformers model's config. Its fields differ by family (num_attention_heads, model_type, the attention
    implementation), and a module's attribute reads as Tensor | Module to a type checker, so it is read as Any."""
    return model.config
