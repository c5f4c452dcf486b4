"""The model's attention maps, read without touching the shared model, and the roll-down that attention tracing
and attention rollout share."""
from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable

import numpy as np
import torch

from rcqa.adapter.calls import config_of


def attention_maps(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> np.ndarray:
    """layers × heads × tokens × tokens: each block's attention probabilities for one input (batch 1; rows: the
    attending token, columns: the attended one), from one forward with output_attentions=True.

    The forward runs on a private copy of the model's modules that shares its weights. Attentions are returned
    only by the eager implementation (the default, sdpa, returns none), which every attention module reads from the
    config it holds, so asking for it on the shared model would switch every thread's forwards; and transformers
    records attentions with forward hooks that it installs on first use and never removes. On the copy, both the
    config and the hooks are private. Copying the modules without their tensors takes about 10 ms."""
    weights = {id(tensor): tensor for tensor in itertools.chain(model.parameters(), model.buffers())}
    private = copy.deepcopy(model, memo=weights)
    config_of(private)._attn_implementation = "eager"
    with torch.no_grad():
        attentions = private(**inputs, output_attentions=True).attentions
    return torch.stack([layer[0] for layer in attentions]).double().cpu().numpy()


def roll_down(mixings: np.ndarray, positions: Iterable[int]) -> np.ndarray:
    """How much each input token feeds `positions` of the last layer: a one-hot at positions (1 at each of them)
    multiplied, from the last layer to the first, by each layer's mixing matrix (layers × tokens × tokens; rows:
    the layer's output token, columns: its input token), r ← r · M_l."""
    relevance = np.zeros(mixings.shape[-1])
    relevance[sorted(set(positions))] = 1.0
    for mixing in mixings[::-1]:
        relevance = relevance @ mixing
    return relevance
