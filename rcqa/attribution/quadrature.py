"""Integration rules for Integrated Gradients: nodes α in [0, 1] and weights that sum to 1."""
from __future__ import annotations

import numpy as np

RULES = ("gausslegendre", "riemann_right", "paper_trapezoid")
PAPER_STEPS = 20  # the released code of Ramnath et al. (2020): α = k/20, k = 0..19


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
