"""What the attribution explains: a scalar function of the QA head's start and end logits."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from rcqa.qa import InputError
from rcqa.spans import NULL_TOKEN

TARGETS = {
    "span_logits": "start logit + end logit of the span",
    "span_log_prob": "log p(start) + log p(end) of the span",
    "paper_confidence": "max softmax(start) + max softmax(end) (the paper's F, argmax re-taken at every α)",
    "start_logit": "start logit of the span",
    "end_logit": "end logit of the span",
    "null": 'log p(no answer) = log p(start = [CLS]) + log p(end = [CLS]) (a SQuAD 2.0 model\'s "no answer")',
    "answer_vs_null": "log p(span) − log p(no answer) = the span's start + end logit − [CLS]'s (the model answers "
                      "when null score − best span score is not above its threshold, not when this is > 0)",
    "contrast": "log p(span) − log p(foil) = the span's start + end logit − the foil's, both from the softmax over "
                "every window's spans (> 0: the span wins); a foil in another window is a constant here",
}

# The targets that hand AttnLRP's rules (rcqa.attribution.lrp) at the logits something other than F: the
# relevance they enter, logits ⊙ ∂F/∂logits, which the layers' scores are conserved against (z: a softmax's logits,
# p its probabilities, H(p) its entropy). Every other target is a sum of logits and enters as F (a contrast's foil in
# another window is a constant: it does not enter).
ENTERING = {
    "span_log_prob": "(z_s − E_p[z]) + (z_e − E_p[z]), log p's first-order term: F = that − H(p_start) − H(p_end)",
    "paper_confidence": "p_max (z_max − E_p[z]) of each softmax, not the probabilities themselves",
    "null": "(z_[CLS] − E_p[z]) of the start and of the end: F = that − H(p_start) − H(p_end)",
}


def log_prob(start_logits: torch.Tensor, end_logits: torch.Tensor, start: int, end: int) -> torch.Tensor:
    """log p(start) + log p(end), each softmax over the window's tokens; per row of a batch."""
    return start_logits.log_softmax(-1)[:, start] + end_logits.log_softmax(-1)[:, end]



class TargetError(InputError):
    """What an explanation is asked to explain cannot be taken at this example (a span or a foil that is not there,
    a foil that is the span itself, a method or target this model does not allow): the model answers; the
    explanation's settings are what the user changes."""


@dataclass(frozen=True)
class Target:
    """A named function of (start_logits, end_logits) at one token span of the analysed window. The null targets
    read "no answer" at [CLS] (null_token); their span is the best span the model weighs against it. The contrast
    subtracts its foil's start + end logit: read at foil_start_token / foil_end_token when the foil lies in the
    analysed window, else foil_score, the logits' sum in the foil's own window, which the analysed window's states
    do not change (the all-windows softmax's normaliser cancels either way)."""

    name: str
    start_token: int
    end_token: int
    null_token: int = NULL_TOKEN
    foil_start_token: int | None = None
    foil_end_token: int | None = None
    foil_score: float = 0.0

    def __post_init__(self):
        if self.name not in TARGETS:
            raise ValueError(f"unknown target {self.name!r}; choose one of {', '.join(TARGETS)}")

    @property
    def description(self) -> str:
        return TARGETS[self.name]

    def __call__(self, start_logits: torch.Tensor, end_logits: torch.Tensor) -> torch.Tensor:
        """One value per row of a batch of logits (batch × tokens), in float64 (the gradient reaching the logits
        keeps their dtype). F is a log-probability near −10, whose float32 spacing (about 1e-6) is as large as
        all that some layers change it by (an encoder layer of a model whose decoder hardly reads it moves F by
        1e-5): F(input) − F(baseline) would then be rounding, and no refinement of the path could meet it."""
        start_logits, end_logits = start_logits.double(), end_logits.double()
        s, e = self.start_token, self.end_token
        if self.name == "span_logits":
            return start_logits[:, s] + end_logits[:, e]
        if self.name == "span_log_prob":
            return log_prob(start_logits, end_logits, s, e)
        if self.name == "paper_confidence":
            return start_logits.softmax(-1).amax(-1) + end_logits.softmax(-1).amax(-1)
        if self.name == "start_logit":
            return start_logits[:, s]
        if self.name == "null":
            return log_prob(start_logits, end_logits, self.null_token, self.null_token)
        if self.name == "answer_vs_null":  # a contrast whose foil is "no answer"; the normalisers cancel
            return log_prob(start_logits, end_logits, s, e) - log_prob(start_logits, end_logits, self.null_token,
                                                                       self.null_token)
        if self.name == "contrast":
            return start_logits[:, s] + end_logits[:, e] - self._foil(start_logits, end_logits)
        return end_logits[:, e]

    def _foil(self, start_logits: torch.Tensor, end_logits: torch.Tensor) -> torch.Tensor | float:
        if self.foil_start_token is None:
            return self.foil_score
        return start_logits[:, self.foil_start_token] + end_logits[:, self.foil_end_token]
