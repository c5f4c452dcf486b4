"""AttnLRP's rules (Achtibat et al., ICML 2024, §3) in their gradient × input form: each rule is an autograd
Function whose forward is the ordinary operation and whose backward is changed so that, with relevance R = x ⊙ ∂F/∂x
at every tensor x, one backward pass propagates the rule's relevance (LXT's "efficient" implementation).

- ε-rule (linear layers): R_in = x ⊙ Wᵀ (R_out / (y + ε sign y)); the bias, and ε, absorb the rest.
- identity rule (element-wise non-linearities): R_in = R_out.
- LayerNorm with its standard deviation held constant: the normalisation is then linear in x and conserves;
  the affine bias absorbs.
- uniform rule (a product of two inputs, Q·Kᵀ and A·V): each input gets half of R_out.
- softmax by its first-order rule: R_in = x ⊙ (R_out − s Σ R_out), which is gradient × input.

A constant added to the attention scores (a mask, a position bias) absorbs its share too. Each absorbing rule adds
what it absorbs (Σ R_out − Σ R_in) to a per-call Ledger, under the block it ran in, so that the docs, the
Completeness tab and the tests can say, layer by layer, where the relevance that is not conserved went.
"""
from __future__ import annotations

import torch

EPSILON = 1e-6  # the ε of the ε-rule and of the identity rule's division


def stabilised(x: torch.Tensor, epsilon: float = EPSILON) -> torch.Tensor:
    """x + ε sign(x), with sign(0) = 1: never zero, and the same sign as x."""
    return x + epsilon * torch.where(x >= 0, 1.0, -1.0).to(x.dtype)


class Ledger:
    """What the absorbing rules absorbed during one backward pass, by the block whose forward ran the rule and by
    kind ('linear', 'layer_norm', 'softmax', 'attention_bias'), kept apart for each item of the batch (the tensors'
    first axis), since one backward serves a batch of inputs whose targets are their own. Whoever runs the blocks
    sets `block` as the forward goes: 0 before the first block, l while block l (whose output is layer l) runs,
    L + 1 after the last (the QA head); each rule keeps the block it ran in (account) and books its absorption there
    in the backward pass."""

    def __init__(self):
        self.block = 0
        self._absorbed: dict[tuple[int, str], list[torch.Tensor]] = {}

    def account(self) -> Account:
        return Account(self, self.block)

    def add(self, block: int, kind: str, relevance_out: torch.Tensor, relevance_in: torch.Tensor) -> None:
        self._absorbed.setdefault((block, kind), []).append(_by_item(relevance_out) - _by_item(relevance_in))

    def take(self) -> dict[int, dict[str, float]]:
        """The sums since the last take, per block and kind, over every item of the batch; then empty."""
        taken: dict[int, dict[str, float]] = {}
        for (block, kind), values in sorted(self._absorbed.items()):
            taken.setdefault(block, {})[kind] = float(torch.cat(values).sum())
        self._absorbed = {}
        return taken

    def take_items(self, items: int) -> list[dict[int, dict[str, float]]]:
        """The sums since the last take, per item of a batch of `items`, per block and kind; then empty."""
        taken: list[dict[int, dict[str, float]]] = [{} for _ in range(items)]
        for (block, kind), values in sorted(self._absorbed.items()):
            for item, amount in enumerate(torch.stack(values).sum(0).tolist()):
                taken[item].setdefault(block, {})[kind] = amount
        self._absorbed = {}
        return taken


def _by_item(relevance: torch.Tensor) -> torch.Tensor:
    """Σ relevance over all but the first axis (a tensor of one axis: one item)."""
    return relevance.detach().reshape(relevance.shape[0] if relevance.dim() > 1 else 1, -1).sum(1)


class Account:
    """One rule's place in a ledger: the block its forward ran in."""

    def __init__(self, ledger: Ledger, block: int):
        self.ledger, self.block = ledger, block

    def add(self, kind: str, relevance_out: torch.Tensor, relevance_in: torch.Tensor) -> None:
        self.ledger.add(self.block, kind, relevance_out, relevance_in)


def account(ledger: Ledger | None) -> Account | None:
    return None if ledger is None else ledger.account()


class EpsilonLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, ledger):
        y = torch.nn.functional.linear(x, weight, bias)
        ctx.save_for_backward(x, weight, y)
        ctx.ledger = account(ledger)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, weight, y = ctx.saved_tensors
        grad_x = (grad_y * y / stabilised(y)) @ weight
        if ctx.ledger is not None:
            ctx.ledger.add("linear", y * grad_y, x * grad_x)
        return grad_x, None, None, None


class IdentityRule(torch.autograd.Function):
    """y = f(x) element-wise; relevance passes through unchanged: ∂/∂x := ∂/∂y · y / x."""

    @staticmethod
    def forward(ctx, x, function):
        y = function(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, y = ctx.saved_tensors
        return grad_y * y / stabilised(x), None


class ConstantStdLayerNorm(torch.autograd.Function):
    """LayerNorm over the last dim with σ treated as a constant: y = (x − mean x) / σ · w + b."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, ledger):
        centred = x - x.mean(-1, keepdim=True)
        std = torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + eps)
        y = centred / std
        y = y * weight if weight is not None else y
        y = y + bias if bias is not None else y
        ctx.save_for_backward(x, y, weight, std)
        ctx.ledger = account(ledger)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, y, weight, std = ctx.saved_tensors
        grad_normalised = grad_y * weight if weight is not None else grad_y
        grad_x = (grad_normalised - grad_normalised.mean(-1, keepdim=True)) / std
        if ctx.ledger is not None:
            ctx.ledger.add("layer_norm", y * grad_y, x * grad_x)
        return grad_x, None, None, None, None


class UniformProduct(torch.autograd.Function):
    """a @ b with the relevance split equally between a and b: each gets half the ordinary gradient (z is
    bilinear in (a, b), so a ⊙ ∂z/∂a and b ⊙ ∂z/∂b each sum to z ⊙ ∂F/∂z)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_z):
        a, b = ctx.saved_tensors
        return 0.5 * (grad_z @ b.transpose(-1, -2)), 0.5 * (a.transpose(-1, -2) @ grad_z)


class FirstOrderSoftmax(torch.autograd.Function):
    """softmax over the last dim; R_in = x ⊙ (R_out − s Σ R_out) with R_out = s ⊙ ∂F/∂s, i.e. its ordinary
    gradient: the Taylor expansion's first-order term, the rest absorbed. Masked scores (very negative or −inf) get
    s = 0 and no relevance."""

    @staticmethod
    def forward(ctx, x, ledger):
        s = torch.softmax(x, dim=-1)
        ctx.save_for_backward(torch.where(s > 0, x, torch.zeros_like(x)), s)
        ctx.ledger = account(ledger)
        return s

    @staticmethod
    def backward(ctx, grad_s):
        x, s = ctx.saved_tensors
        grad_x = s * (grad_s - (s * grad_s).sum(-1, keepdim=True))
        if ctx.ledger is not None:
            ctx.ledger.add("softmax", s * grad_s, x * grad_x)
        return grad_x, None


class ConstantAdded(torch.autograd.Function):
    """x + c with c a constant (an attention mask, MPNet's position bias): the gradient passes to x unchanged, and c
    absorbs its share c ⊙ ∂F/∂y (masked entries, whose gradient is 0, absorb nothing)."""

    @staticmethod
    def forward(ctx, x, constant, ledger):
        ctx.save_for_backward(constant)
        ctx.ledger = account(ledger)
        return x + constant

    @staticmethod
    def backward(ctx, grad_y):
        (constant,) = ctx.saved_tensors
        if ctx.ledger is not None:
            taken = torch.where(grad_y != 0, constant * grad_y, torch.zeros_like(grad_y))
            ctx.ledger.add("attention_bias", taken, torch.zeros_like(taken))
        return grad_y, None, None


def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, additive: torch.Tensor | None,
              scaling: float, ledger: Ledger | None, kept: torch.Tensor | None = None) -> torch.Tensor:
    """softmax(Q Kᵀ · scaling + additive) V per head (batch × heads × tokens × head dim), by the rules: uniform for
    both products, first-order for the softmax; the additive mask or position bias is a constant and absorbs. `kept`
    (boolean, broadcast over the scores): the scores a padded batch's mask keeps; the others get weight 0 and no
    gradient, so nothing is absorbed there and a padded item's relevance is its own alone."""
    scores = UniformProduct.apply(query, key.transpose(-1, -2)) * scaling
    if kept is not None:
        scores = scores.masked_fill(~kept, torch.finfo(scores.dtype).min)
    if additive is not None:
        scores = ConstantAdded.apply(scores, additive, ledger)
    return UniformProduct.apply(FirstOrderSoftmax.apply(scores, ledger), value)
