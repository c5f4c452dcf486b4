"""AttnLRP relevance at the output of the embeddings and of every block, from one forward and one backward pass
per target, on a private rule-modified copy of the model (rcqa.attribution.lrp.model)."""
from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from rcqa.adapter.copies import StandIn
from rcqa.adapter.structure import block_lists
from rcqa.attribution.lrp.model import rule_copy
from rcqa.attribution.lrp.rules import Ledger
from rcqa.attribution.targets import Target


@dataclass
class Relevance:
    """hidden: layers × tokens × dim (H_0 … H_L of the one input); relevance: targets × layers × tokens × dim, the
    states times the rule-modified gradient of each target there; values: each target's F; entering: the relevance
    each target hands the logits (logits ⊙ ∂F/∂logits), what the rules then propagate; ledgers: per target, what
    the absorbing rules took in each block (1 … L, and L + 1 the QA head), by kind (rules.Ledger)."""

    hidden: torch.Tensor
    relevance: torch.Tensor
    values: list[float]
    entering: list[float]
    ledgers: list[dict[int, dict[str, float]]]

    def absorbed(self, target: int, layer: int = 0) -> dict[str, float]:
        """What the rules absorbed between the logits and `layer`'s output, by kind: the blocks above the layer
        and the QA head. entering − Σ of it = Σ relevance at the layer, up to the identity rule's ε."""
        total: dict[str, float] = {}
        for block, kinds in self.ledgers[target].items():
            for kind, amount in kinds.items() if block > layer else ():
                total[kind] = total.get(kind, 0.0) + amount
        return total

    def target_gap(self, target: int) -> float:
        """F − the relevance entering at the logits: what the target function itself does not pass on (−H(p) for
        each log-softmax, a foil in another window, 0 for a sum of logits)."""
        return self.values[target] - self.entering[target]


class _Relay(StandIn):
    """Stands in for one block of the private copy: keeps the state each call receives (the first one cut from the
    embeddings' graph, so that the backward stops there) and the last call's output."""

    def __init__(self, block: torch.nn.Module, states: list[torch.Tensor], ledger: Ledger):
        super().__init__(block)
        self.states, self.ledger = states, ledger

    def forward(self, *args, **kwargs):
        hidden = args[0] if args else kwargs.pop("hidden_states")
        if not self.states:
            hidden = hidden.detach().requires_grad_(True)
        self.states[-1:] = [hidden]  # the previous call's output is this call's input
        self.ledger.block = len(self.states)  # this block's output is that layer
        output = self.module(hidden, *args[1:], **kwargs)
        self.states.append(output[0] if isinstance(output, tuple) else output)
        self.ledger.block = len(self.states)  # the next block's, or after the last, the QA head's
        return output


@dataclass
class _RuleModel:
    """A rule copy with its blocks relayed, the ledger its rules book into, the states its relays keep, and the
    forward answer_logits ran, kept for the relevance of the same inputs."""

    private: torch.nn.Module
    ledger: Ledger
    states: list[torch.Tensor]
    pending: tuple[dict[str, torch.Tensor], Any] | None = None

    @classmethod
    def of(cls, model: torch.nn.Module) -> _RuleModel:
        ledger, states = Ledger(), list[torch.Tensor]()
        private = rule_copy(model, ledger)
        for _, blocks in block_lists(private):  # the copy's own lists: the shared model keeps its blocks
            for index, block in enumerate(list(blocks)):
                blocks[index] = _Relay(block, states, ledger)
        return cls(private, ledger, states)

    def forward(self, inputs: dict[str, torch.Tensor]) -> Any:
        """A new forward of `inputs`, its graph kept for the backward; nothing left from an earlier call (one that
        failed midway included)."""
        self.states.clear()
        self.ledger.take()
        self.pending = None
        with torch.enable_grad():
            return self.private(**inputs)

    def forward_of(self, inputs: dict[str, torch.Tensor]) -> Any:
        """The forward answer_logits kept, where it ran these very inputs; else a new one."""
        pending, self.pending = self.pending, None
        if pending is not None and pending[0].keys() == inputs.keys() and all(
                torch.equal(pending[0][name], value) for name, value in inputs.items()):
            return pending[1]
        return self.forward(inputs)


# each thread's rule copies, by the model they share weights with: a copy costs a deep copy of the module tree
# (40 ms of a 0.37 s question on the default model), and holds per-call state, so no two threads share one; a
# model dropped from memory drops its copies with it
_copies = threading.local()


def _rule_model(model: torch.nn.Module) -> _RuleModel:
    kept = _copies.__dict__.setdefault("by_model", weakref.WeakKeyDictionary())
    if model not in kept:
        kept[model] = _RuleModel.of(model)
    return kept[model]


def answer_logits(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """The start and end logits (float, on the CPU) of an input (one window, or a batch padded on the right; on the
    model's device) from the rule copy's forward, which this thread keeps for the layer_relevance (batch_relevance)
    of the same inputs that follows: the answer and
    its explanation from one forward pass. The rules change the backward only, so these are the model's logits up
    to float rounding (the copy's attention is the eager one, the model's may be fused)."""
    rule_model = _rule_model(model)
    output = rule_model.forward(inputs)
    rule_model.pending = (inputs, output)
    return output.start_logits.detach().float().cpu(), output.end_logits.detach().float().cpu()


def forget_kept_forward(model: torch.nn.Module) -> None:
    """Drop the forward answer_logits kept in this thread for `model`, where no layer_relevance will follow (the
    explanation was refused after answering): its graph holds a window's activations until the thread's next call."""
    kept = _copies.__dict__.get("by_model")
    if kept is not None and model in kept:
        kept[model].pending = None


def layer_relevance(model: torch.nn.Module, inputs: dict[str, torch.Tensor], targets: list[Target]) -> Relevance:
    """The relevance of each target at every layer of one input (batch 1, on the model's device)."""
    return batch_relevance(model, inputs, [targets])[0]


def batch_relevance(model: torch.nn.Module, inputs: dict[str, torch.Tensor],
                    targets: Sequence[Sequence[Target]]) -> list[Relevance]:
    """The relevance of each item's own targets at every layer of a batch of inputs (on the model's device, padded
    on the right, the attention mask marking each item's tokens: rcqa.attribution.window.padded_batch), from one
    forward and, per target, one backward for the whole batch. No item's score depends on another's: the mask keeps
    a padded token out of every real token's attention, each target reads its item's logits over its own tokens, and
    so the gradient at a padded token is zero and nothing absorbed there is booked; an item's relevance equals the
    same input's alone up to float rounding (tests/attribution/test_attnlrp_batch.py)."""
    rule_model = _rule_model(model)
    output = rule_model.forward_of(inputs)
    ledger, states = rule_model.ledger, rule_model.states
    mask = inputs.get("attention_mask")
    lengths = mask.sum(-1).tolist() if mask is not None else [inputs["input_ids"].shape[1]] * len(targets)
    logits = (output.start_logits, output.end_logits)
    found: list[dict[str, list]] = [{"relevance": [], "values": [], "entering": [], "ledgers": []} for _ in targets]
    passes = max(len(own) for own in targets)
    with torch.enable_grad():
        for index in range(passes):
            items = [i for i, own in enumerate(targets) if index < len(own)]
            values = [targets[i][index](*(z[i:i + 1, :lengths[i]] for z in logits)).sum() for i in items]
            # materialised: a target of one logit (start_logit, end_logit) leaves the other one's gradient zero
            *gradients, start_gradient, end_gradient = torch.autograd.grad(
                torch.stack(values).sum(), [*states, *logits], retain_graph=index < passes - 1,
                materialize_grads=True)
            absorbed = ledger.take_items(len(targets))
            for item, value in zip(items, values):
                length = lengths[item]
                kept = found[item]
                kept["relevance"].append(torch.stack([(s * g)[item, :length].detach()
                                                      for s, g in zip(states, gradients)]))
                kept["values"].append(float(value.detach()))
                # what enters the rules: logits ⊙ ∂F/∂logits (the first-order rule at the target function itself)
                kept["entering"].append(float(sum((z[item, :length].detach() * g[item, :length]).sum()
                                                  for z, g in zip(logits, (start_gradient, end_gradient)))))
                kept["ledgers"].append(absorbed[item])
    relevances = [Relevance(torch.stack([s[item, :lengths[item]].detach() for s in states]),
                            torch.stack(kept["relevance"]), kept["values"], kept["entering"], kept["ledgers"])
                  for item, kept in enumerate(found)]
    states.clear()  # the kept copy keeps no call's tensors
    return relevances
