"""The signed first-order estimate of a head's knock-out: knocking the head out moves its gate g from 1 to 0
(rcqa.attention_heads.gates, the zero fill), so to first order Δ = F(g = 0) − F(g = 1) ≈ −∂F/∂g at g = 1. It
predicts the zero fill's delta_log_prob itself, its sign included, where the gradient importance |∂F/∂g| predicts
only its size; it reads the gradient importance's own pass (the gate gradient the shared case keeps), so it costs
no pass of its own."""
from __future__ import annotations

from rcqa.attention_heads.base import Scored, SharedCase, Told
from rcqa.attention_heads.gradient import GradientImportance, gate_gradient


class FirstOrderKnockout(GradientImportance):
    name = "first_order"
    label = "First-order knock-out (−∂F/∂g)"
    short = "the first-order estimate"
    description = "first-order estimate of its knock-out's change in log p(span), −∂F/∂g"
    predicts = "change"
    step = "first-order estimate of every head's knock-out"

    def score(self, shared: SharedCase, told: Told) -> Scored:
        estimate = -shared.once(gate_gradient)
        told(1.0, self.step)
        return Scored(estimate)
