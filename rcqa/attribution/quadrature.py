"""Integration rules for Integrated Gradients: nodes α in [0, 1] and weights that sum to 1."""
from __future__ import annotations

import numpy as np

from rcqa.types.settings import PAPER_STEPS, RULES  # the names ExplainSettings accepts


def nodes_and_weights(rule: str, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The path points α_k and weights w_k with IG ≈ (x − x') ⊙ Σ_k w_k ∇F(x' + α_k (x − x'))."""
    if rule == "gausslegendre":
        points, weights = np.polynomial.legendre.leggauss(steps)
        return (points + 1) / 2, weights / 2
    if rule == "riemann_right":  # the paper's text: 50 right-Riemann steps
        return np.arange(1, steps + 1) / steps, np.full(steps, 1 / steps)
    if rule == "paper_trapezoid":
        # gradients at k/20 averaged pairwise (trapezoid), then averaged: α = 1 is never evaluated
        weights = np.full(PAPER_STEPS, 1 / (PAPER_STEPS - 1))
        weights[[0, -1]] /= 2
        return np.arange(PAPER_STEPS) / PAPER_STEPS, weights
    raise ValueError(f"unknown integration rule {rule!r}; choose one of {', '.join(RULES)}")


def adaptive(rule: str) -> bool:
    """Whether the engine refines this rule to a tolerance: Gauss–Legendre, on panels. The paper's rules
    (right Riemann, the released trapezoid) run exactly as set, to reproduce its numbers."""
    return rule == "gausslegendre"


def gauss_kronrod(points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kronrod's extension of the `points`-point Gauss–Legendre rule on [0, 1]: the points + 1 nodes it adds,
    then the weights of the (2·points + 1)-point rule at the Gauss nodes (in nodes_and_weights' order) and at
    the added nodes. The extension integrates polynomials of degree 3·points + 1 exactly while reusing every
    Gauss node, so refining a panel costs points + 1 gradients instead of the 2·points that halving it does.

    The added nodes are the zeros of the Stieltjes polynomial E, orthogonal to P_points · P_k for k ≤ points;
    E is solved for in the Legendre basis, which stays well conditioned at any order."""
    legendre = np.polynomial.legendre
    gauss, _ = legendre.leggauss(points)
    exact_x, exact_w = legendre.leggauss(3 * points + 3)  # exact for the degree-(3·points + 1) products below
    basis = np.stack([legendre.legval(exact_x, np.eye(points + 2)[j]) for j in range(points + 2)])
    products = (exact_w * basis[points] * basis[:points + 1]) @ basis.T  # ∫ P_points P_k P_j, k ≤ points
    coefficients = np.append(np.linalg.solve(products[:, :points + 1], -products[:, points + 1]), 1.0)
    added = np.sort(legendre.legroots(coefficients).real)
    nodes = np.concatenate([gauss, added])
    moments = np.stack([legendre.legval(nodes, np.eye(2 * points + 1)[k]) for k in range(2 * points + 1)])
    weights = np.linalg.solve(moments, np.eye(2 * points + 1)[0] * 2)
    return (added + 1) / 2, weights[:points] / 2, weights[points:] / 2
