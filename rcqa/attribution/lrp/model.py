"""A private, rule-modified copy of a shared QA model: the same weights and forward values, AttnLRP's backward.

The copy is made per call (copy.deepcopy sharing every parameter and buffer, as rcqa.attribution.methods.attention
does), so the shared model, which other threads are running, is never patched: in the copy every Linear, LayerNorm
and activation module is replaced by its rule's module, and attention runs through rules.attention, by the
attention function registered below (the families whose attention transformers dispatches by
config._attn_implementation; the copy's config is its own) or by a rule-following subclass (MPNet, which computes
its attention inline).
"""
from __future__ import annotations

import copy
import itertools
from typing import cast

import torch
from transformers.activations import ACT2CLS
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
from transformers.modeling_utils import AttentionInterface
from transformers.models.mpnet.modeling_mpnet import MPNetSelfAttention

from rcqa.adapter.calls import config_of
from rcqa.attribution.lrp import rules
from rcqa.attribution.stack import find_blocks

FAMILIES = ("bert", "roberta", "xlm-roberta", "electra", "distilbert", "albert", "mpnet")
ATTENTION = "rcqa_attnlrp"  # the name the copy's config dispatches attention by
# transformers' activation classes (ACT2CLS holds a class, or a class with its arguments): modules all
_ACTIVATIONS = cast(tuple[type[torch.nn.Module], ...],
                    tuple({v[0] if isinstance(v, tuple) else v for v in ACT2CLS.values()} | {torch.nn.GELU}))


def check_family(model: torch.nn.Module) -> None:
    family = getattr(model.config, "model_type", type(model).__name__)
    if family not in FAMILIES:
        raise ValueError(f"AttnLRP has rules for {', '.join(FAMILIES)} models, not {family}.")


class RuleLinear(torch.nn.Module):
    def __init__(self, linear: torch.nn.Linear, ledger: rules.Ledger):
        super().__init__()
        self.linear, self.ledger = linear, ledger

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rules.EpsilonLinear.apply(x, self.linear.weight, self.linear.bias, self.ledger)


class RuleLayerNorm(torch.nn.Module):
    def __init__(self, norm: torch.nn.LayerNorm, ledger: rules.Ledger):
        super().__init__()
        self.norm, self.ledger = norm, ledger

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rules.ConstantStdLayerNorm.apply(x, self.norm.weight, self.norm.bias, self.norm.eps, self.ledger)


class RuleActivation(torch.nn.Module):
    def __init__(self, activation: torch.nn.Module):
        super().__init__()
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rules.IdentityRule.apply(x, self.activation)


def additive_mask(mask: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor | None:
    """The attention mask as a term added to the scores: as it is where it is one (float), else 0 where a token may
    be attended to and the dtype's lowest value where not (a 2-d batch × keys mask or a boolean one)."""
    if mask is None or mask.is_floating_point():
        return mask
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    return torch.where(mask.bool(), 0.0, torch.finfo(dtype).min).to(dtype)


def rule_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                   attention_mask: torch.Tensor | None, scaling: float | None = None, dropout: float = 0.0,
                   **kwargs) -> tuple[torch.Tensor, None]:
    """transformers' attention-function interface, computed by AttnLRP's rules (eval mode: no dropout)."""
    scaling = query.size(-1) ** -0.5 if scaling is None else scaling
    # SDPA's boolean mask (a padded batch's) masks scores: a term added to them would be booked as absorbing
    kept = attention_mask if attention_mask is not None and attention_mask.dtype == torch.bool else None
    output = rules.attention(query, key, value, None if kept is not None else additive_mask(attention_mask, query.dtype),
                             scaling, getattr(module, "lrp_ledger", None), kept)
    return output.transpose(1, 2).contiguous(), None


AttentionInterface.register(ATTENTION, rule_attention)  # a new name only: no existing implementation changes
# the mask the copy's attention is handed is SDPA's (none where every token is real, a boolean one where a batch is
# padded): an attention name transformers has no mask function for gets no mask at all, and a padded batch's
# real tokens would attend to its padding (rcqa.attribution.lrp.relevance.batch_relevance)
AttentionMaskInterface.register(ATTENTION, sdpa_mask)


class RuleMPNetSelfAttention(MPNetSelfAttention):
    """MPNet's self-attention (its relative position bias is a constant added to the scores) by the rules."""

    def forward(self, hidden_states, attention_mask=None, position_bias=None, output_attentions=False, **kwargs):
        shape = (*hidden_states.shape[:-1], -1, self.attention_head_size)
        q, k, v = (layer(hidden_states).view(shape).transpose(1, 2) for layer in (self.q, self.k, self.v))
        additive = additive_mask(attention_mask, q.dtype)
        if position_bias is not None:
            additive = position_bias if additive is None else additive + position_bias
        context = rules.attention(q, k, v, additive, self.attention_head_size ** -0.5, self.lrp_ledger)
        return (self.o(context.transpose(1, 2).reshape(*hidden_states.shape[:-1], self.all_head_size)),)


def rule_copy(model: torch.nn.Module, ledger: rules.Ledger) -> torch.nn.Module:
    """A copy of model that shares its weights and runs AttnLRP's rules (eval mode, eager rule attention)."""
    check_family(model)
    weights = {id(tensor): tensor for tensor in itertools.chain(model.parameters(), model.buffers())}
    private = copy.deepcopy(model, memo=weights).eval()
    config_of(private)._attn_implementation = ATTENTION
    for module in list(private.modules()):
        setattr(module, "lrp_ledger", ledger)  # an attribute of our own, which the rule modules read
        if isinstance(module, MPNetSelfAttention):
            module.__class__ = RuleMPNetSelfAttention
        for name, child in list(module._modules.items()):
            if isinstance(child, torch.nn.Linear):
                module._modules[name] = RuleLinear(child, ledger)
            elif isinstance(child, torch.nn.LayerNorm):
                module._modules[name] = RuleLayerNorm(child, ledger)
            elif isinstance(child, _ACTIVATIONS):
                module._modules[name] = RuleActivation(child)
    find_blocks(private)  # the blocks the relevance is read between must be there
    return private
