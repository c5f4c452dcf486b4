"""What the attribution explains: a scalar function of the QA head's start and end logits."""
from __future__ import annotations

from dataclasses import dataclass

import torch

TARGETS = {
    "span_logits": "start logit + end logit of the span",
    "span_log_prob": "log p(start) + log p(end) of the span",
    "paper_confidence": "max softmax(start) + max softmax(end) (the paper's F, argmax re-taken at every α)",
    "start_logit": "start logit of the span",
    "end_logit": "end logit of the span",
}


@dataclass(frozen=True)
class Target:
    """A named function of (start_logits, end_logits) at one token span of the analysed window."""

    name: str
    start_token: int
    end_token: int

    def __post_init__(self):
        if self.name not in TARGETS:
            raise ValueError(f"unknown target {self.name!r}; choose one of {', '.join(TARGETS)}")

    @property
    def description(self) -> str:
        return TARGETS[self.name]

    def __call__(self, start_logits: torch.Tensor, end_logits: torch.Tensor) -> torch.Tensor:
        """One value per row of a batch of logits (batch × tokens)."""
        s, e = self.start_token, self.end_token
        if self.name == "span_logits":
            return start_logits[:, s] + end_logits[:, e]
        if self.name == "span_log_prob":
            return start_logits.log_softmax(-1)[:, s] + end_logits.log_softmax(-1)[:, e]
        if self.name == "paper_confidence":
            return start_logits.softmax(-1).amax(-1) + end_logits.softmax(-1).amax(-1)
        if self.name == "start_logit":
            return start_logits[:, s]
        return end_logits[:, e]
