"""Each AttnLRP rule alone on a tiny module, against the paper's formulas written on relevances (R = x ⊙ ∂F/∂x):
the conserving rules hand on exactly what they receive; the absorbing ones absorb what the formula says."""
import pytest
import torch

from rcqa.attribution.lrp.rules import (EPSILON, ConstantStdLayerNorm, EpsilonLinear, FirstOrderSoftmax,
                                        IdentityRule, Ledger, UniformProduct, attention)

generator = torch.Generator().manual_seed(0)
DOUBLE = torch.float64


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=DOUBLE)


def relevance_through(function, *inputs):
    """(R_out, R_in per input) for a random upstream gradient: R_out = y ⊙ g, R_in = x ⊙ ∂/∂x."""
    inputs = [x.clone().requires_grad_(True) for x in inputs]
    y = function(*inputs)
    upstream = randn(*y.shape)
    gradients = torch.autograd.grad(y, inputs, upstream)
    return y.detach(), upstream, (y * upstream).detach(), [(x * g).detach() for x, g in zip(inputs, gradients)]


def sign(y):
    return torch.where(y >= 0, 1.0, -1.0)


def test_epsilon_rule_without_bias_conserves():
    weight = randn(5, 4)
    _, _, out, (into,) = relevance_through(lambda x: EpsilonLinear.apply(x, weight, None, None), randn(3, 4))
    assert torch.isclose(into.sum(), out.sum(), atol=1e-5)


def test_epsilon_rule_gives_each_input_its_share_and_the_bias_absorbs_the_formula():
    x, weight, bias, ledger = randn(3, 4), randn(5, 4), randn(5), Ledger()
    y, _, out, (into,) = relevance_through(lambda x: EpsilonLinear.apply(x, weight, bias, ledger), x)
    stabilised = y + EPSILON * sign(y)
    # R_i = Σ_j x_i W_ji R_j / (y_j + ε sign y_j), the ε-rule of the paper, written out
    expected = torch.einsum("ti,ji,tj->ti", x, weight, out / stabilised)
    assert torch.allclose(into, expected, atol=1e-10)
    # what it absorbs: Σ_j R_j (b_j + ε sign y_j) / (y_j + ε sign y_j)
    absorbed = (out * (bias + EPSILON * sign(y)) / stabilised).sum()
    assert torch.isclose(out.sum() - into.sum(), absorbed, atol=1e-10)
    assert ledger.take()[0]["linear"] == pytest.approx(float(absorbed), abs=1e-10)


@pytest.mark.parametrize("function", [torch.nn.functional.gelu, torch.tanh, torch.nn.functional.silu])
def test_identity_rule_hands_each_element_its_own_relevance(function):
    _, _, out, (into,) = relevance_through(lambda x: IdentityRule.apply(x, function), randn(4, 6))
    assert torch.allclose(into, out, atol=1e-5)


def test_layer_norm_with_constant_sigma_conserves_without_bias():
    weight = randn(6)
    _, _, out, (into,) = relevance_through(lambda x: ConstantStdLayerNorm.apply(x, weight, None, 1e-12, None),
                                           3 + 2 * randn(4, 6))
    assert torch.isclose(into.sum(), out.sum(), atol=1e-5)


def test_layer_norm_is_linear_in_x_with_sigma_fixed_and_its_bias_absorbs_b_times_its_gradient():
    x, weight, bias, ledger = 3 + 2 * randn(4, 6), randn(6), randn(6), Ledger()
    _, upstream, out, (into,) = relevance_through(
        lambda x: ConstantStdLayerNorm.apply(x, weight, bias, 1e-12, ledger), x)
    # the normalisation as the linear map it is once σ is a number: z = (I − 11ᵀ/D) x / σ, per token
    sigma = x.std(-1, unbiased=False, keepdim=True)
    centring = torch.eye(6, dtype=DOUBLE) - 1 / 6
    expected = x * ((upstream * weight) @ centring) / sigma
    assert torch.allclose(into, expected, atol=1e-10)
    assert torch.isclose(out.sum() - into.sum(), (bias * upstream).sum(), atol=1e-10)
    assert ledger.take()[0]["layer_norm"] == pytest.approx(float((bias * upstream).sum()), abs=1e-10)


def test_uniform_rule_splits_a_product_equally_between_its_factors():
    a, b = randn(2, 3, 4), randn(2, 4, 5)
    z, _, out, (into_a, into_b) = relevance_through(UniformProduct.apply, a, b)
    # z_ij = Σ_k a_ik b_kj: each factor gets half of each term's share a_ik b_kj / z_ij of R_ij
    share = torch.einsum("nik,nkj,nij->nikj", a, b, out / z)
    assert torch.allclose(into_a, share.sum(-1) / 2, atol=1e-8)
    assert torch.allclose(into_b, share.sum(1) / 2, atol=1e-8)
    assert torch.isclose(into_a.sum(), out.sum() / 2, atol=1e-5)
    assert torch.isclose(into_b.sum(), out.sum() / 2, atol=1e-5)


def test_softmax_first_order_rule_and_what_it_absorbs():
    x, ledger = randn(3, 5), Ledger()
    s, _, out, (into,) = relevance_through(lambda x: FirstOrderSoftmax.apply(x, ledger), x)
    # the paper's softmax rule: R_i^{l-1} = x_i (R_i − s_i Σ_j R_j)
    expected = x * (out - s * out.sum(-1, keepdim=True))
    assert torch.allclose(into, expected, atol=1e-10)
    assert ledger.take()[0]["softmax"] == pytest.approx(float(out.sum() - expected.sum()), abs=1e-10)


@pytest.mark.parametrize("masked", [torch.finfo(DOUBLE).min, float("-inf")])
def test_a_masked_score_gets_no_gradient_and_changes_nothing_the_rule_absorbs(masked):
    kept, upstream = randn(2, 3), randn(2, 4)

    def absorbed(x, gradient_out):
        ledger = Ledger()
        x = x.clone().requires_grad_(True)
        (gradient,) = torch.autograd.grad(FirstOrderSoftmax.apply(x, ledger), x, gradient_out)
        return gradient, ledger.take()[0]["softmax"]

    gradient, with_mask = absorbed(torch.cat([kept, torch.full((2, 1), masked, dtype=DOUBLE)], 1), upstream)
    assert (gradient[:, -1] == 0).all() and torch.isfinite(gradient).all()
    assert with_mask == pytest.approx(absorbed(kept, upstream[:, :-1])[1], abs=1e-12)


def test_one_block_toy_by_hand():
    """Two tokens of one dimension, x = (1, 2); q = k = v = x; y = x + softmax(q kᵀ) v; F = y_0. Worked by hand:
    A_0 = softmax(1·1, 1·2) = (1, e)/(1 + e); y_0 = 1 + (1 + 2e)/(1 + e).
    R(y_0) = y_0. The residual sum hands x_0 its own value 1 and the attention output o_0 = (1 + 2e)/(1 + e).
    A·V (uniform): R(A_0j) = R(v_j) = A_0j v_j / 2.
    softmax (first order): R(S_0j) = S_0j (R(A_0j) − A_0j Σ_k R(A_0k)), with S_0j = x_0 x_j = x_j.
    Q·Kᵀ (uniform): R(q_0) and R(k_j) each take R(S_0j) / 2; q, k, v are x itself, so their shares add up."""
    e = torch.exp(torch.tensor(1.0, dtype=DOUBLE))
    a = torch.stack([1 / (1 + e), e / (1 + e)])
    x_values = torch.tensor([1.0, 2.0], dtype=DOUBLE)
    relevance_a = a * x_values / 2
    relevance_s = x_values * (relevance_a - a * relevance_a.sum())
    by_hand = torch.zeros(2, dtype=DOUBLE)
    by_hand[0] += 1.0                       # residual
    by_hand += relevance_a                  # v_j
    by_hand[0] += relevance_s.sum() / 2     # q_0
    by_hand += relevance_s / 2              # k_j

    x = x_values.clone().requires_grad_(True)
    h = x.view(1, 1, 2, 1)
    y = x + attention(h, h, h, None, 1.0, None).view(2)
    (gradient,) = torch.autograd.grad(y[0], x)
    assert torch.allclose(x.detach() * gradient, by_hand, atol=1e-12)
    assert float(y[0].detach()) == pytest.approx(float(1 + (1 + 2 * e) / (1 + e)))
