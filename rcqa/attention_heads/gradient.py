"""Michel et al.'s gradient importance (NeurIPS 2019): |∂F/∂g| for each head's gate g at 1
(rcqa.attention_heads.gates), from one forward and one backward of the gated copy. Its magnitude is the size of the
first-order estimate of the knock-out; the gradient itself, signed, is kept in the shared case for any score that
reads the same pass."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import torch

from rcqa.attention_heads.base import HeadScore, Predicts, Scored, SharedCase, Told
from rcqa.attention_heads.memory import HeadsWindow
from rcqa.attention_heads.scores import HeadCase, gated_logits, layout_of, span_log_likelihood
from rcqa.model import QAModel


def gate_gradient(qa_model: QAModel, case: HeadCase) -> np.ndarray:
    """∂F/∂g for every head's gate g at 1 (layers × heads), signed."""
    layout = layout_of(qa_model, case)
    gates = torch.ones(1, layout.layers, layout.heads, requires_grad=True)
    with torch.enable_grad():
        start, end = gated_logits(qa_model, case, layout, gates, "zero")
        (gradient,) = torch.autograd.grad(span_log_likelihood(start, end, case.span).sum(), gates)
    return gradient[0].numpy()


def gradient_importance(qa_model: QAModel, case: HeadCase) -> np.ndarray:
    """|∂F/∂g| for every head's gate g at 1 (layers × heads): Michel et al.'s importance for one question."""
    return np.abs(gate_gradient(qa_model, case))


class GradientImportance(HeadScore):
    name = "gradient"
    label = "Gradient importance"
    short = "the gradient"
    description = "gradient importance |∂F/∂g| (Michel et al. 2019)"
    predicts: ClassVar[Predicts] = "size"  # a subclass may read the same pass for another prediction
    step = "gradient importance of every head"
    measured_seconds = 0.06

    def passes(self, layers: int, heads: int) -> float:
        return layers  # one forward and one backward through every block

    def memory_bytes(self, window: HeadsWindow, budget_mb: float) -> int:
        return window.bytes(window.layers)

    def score(self, shared: SharedCase, told: Told) -> Scored:
        importance = np.abs(shared.once(gate_gradient))
        told(1.0, self.step)
        return Scored(importance)
