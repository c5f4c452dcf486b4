"""The interface every attribution method shares, as Captum's single-purpose attribution classes do: a method
reads a Case (one explained input) and returns one raw score per token of its window.

Every method explains the same target F, the one the engine explains (rcqa.attribution.targets: by default
log p(start) + log p(end) of the explained span), so their scores can be compared token by token once each is
normalised as Wu & Ong do: over the example's max |score|, special tokens excluded.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property
import numpy as np
import torch

from rcqa.attribution.window import ExplainedWindow, explained_window
from rcqa.attribution.methods.attention import attention_maps
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.targets import Target
from rcqa.types.settings import ExplainSettings, SpanSpec
from rcqa.model import QAModel
from rcqa.types import Example, Word


class Case:
    """One explained input: the window that holds the explained span, as the model reads it, and the target at
    that span. What several methods need is computed once, on first use: the cached layer outputs, the target's
    gradient at the embeddings (gradient and gradient × input), the attention maps (tracing and rollout)."""

    def __init__(self, qa_model: QAModel, example: Example, window: ExplainedWindow,
                 target: str = "span_log_prob"):
        self.qa_model, self.example, self.window = qa_model, example, window
        self.target = Target(target, window.start_token, window.end_token)
        self.words = window.words(example.passage)
        self.special = np.array([segment == "special" for segment in window.segments])

    @classmethod
    def of(cls, qa_model: QAModel, example: Example, target: str = "span_log_prob",
           span: SpanSpec | str = "predicted", allow_null: bool | None = None) -> Case:
        """Answer the example (allow_null as in rcqa.qa.answer) and take the window of the span to explain
        (a SpanSpec, or its string form 'predicted', 'gold' or 'nbest:K')."""
        return cls(qa_model, example, explained_window(qa_model, example, span, allow_null), target)

    @property
    def length(self) -> int:
        return self.window.length

    @property
    def target_positions(self) -> tuple[int, int]:
        return self.target.start_token, self.target.end_token

    def passage_words(self) -> list[Word]:
        """The passage's words in the window, in text order; punctuation is no word (as in rcqa.types)."""
        return [w for w in self.words if w.segment == "passage" and not w.is_punctuation]

    @cached_property
    def device_inputs(self) -> dict[str, torch.Tensor]:
        return {name: values.to(self.qa_model.device) for name, values in self.window.inputs.items()}

    @cached_property
    def stack(self) -> LayerStack:
        """The window's layer outputs, and the model above each of them (recorded on a private copy)."""
        return LayerStack(self.qa_model.model, self.device_inputs)

    @cached_property
    def embedding_gradient(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(E, ∂F/∂E), each tokens × dim: the embeddings' output (layer 0 of the engine) and F's gradient there."""
        embeddings = self.stack.hidden[0].detach().clone().requires_grad_(True)
        with torch.enable_grad():
            start, end = self.stack.run_from(0, embeddings)
            (gradient,) = torch.autograd.grad(self.target(start, end).sum(), embeddings)
        return embeddings.detach()[0], gradient[0]

    @cached_property
    def attentions(self) -> np.ndarray:
        """layers × heads × tokens × tokens: every block's attention probabilities (rows: the attending token)."""
        return attention_maps(self.qa_model.model, self.device_inputs)


RANKINGS = {
    "signed": "the signed score (summed over hidden dims where it has them): most for the answer first, words that "
              "speak against it last",
    "magnitude": "the score's size whatever its sign (squared L2 norm over hidden dims, or a weight that is never "
                 "negative): words for and against the answer alike first",
    "random": "a random order (seeded draws)",
}


class AttributionMethod(ABC):
    """One way of scoring the tokens of a Case for the target F, under each ranking it has (RANKINGS): a method
    whose scores carry a sign is ranked both by the signed score and by its magnitude, so that every method is
    judged by the same rule; one without a sign (the gradient's norm, attention mass) by its magnitude only.

    The registry (rcqa.attribution.methods.METHODS) holds one of each, made with the default settings; made()
    gives the one a comparison runs, with its settings and seed."""

    name: str
    label: str  # as a page names it
    colour: str  # as the figures draw it
    description: str
    rankings: tuple[str, ...] = ("magnitude",)
    # the one ranking it had before each method was ranked both ways (comparisons saved then still load)
    ranking_before_both: str = "magnitude"
    compared: bool = True  # among the methods compared with random by default
    # its cost, in passes through every block (a forward and a backward: one IG path point), and the pass it may share
    # with other methods of the same Case (the embeddings' gradient; the attention maps), counted once
    passes: float = 1.0
    shared_pass: str | None = None

    def made(self, settings: ExplainSettings, seed: int) -> AttributionMethod:
        """This method as a comparison runs it with the explanation's settings and a random draw's seed: itself,
        for a method that reads neither."""
        return self

    def block_passes(self) -> float:
        return self.passes

    @abstractmethod
    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        """Per ranking of `rankings`, one raw score per token of the case's window (float64, unnormalised)."""


def signed_and_magnitude(per_dim: torch.Tensor) -> dict[str, np.ndarray]:
    """A tokens × dims attribution as the two rankings' token scores: the sum over dims (what completeness and
    conservation hold for) and the squared L2 norm."""
    per_dim = per_dim.double()
    return {"signed": per_dim.sum(-1).cpu().numpy(), "magnitude": (per_dim ** 2).sum(-1).cpu().numpy()}


def normalised(scores: np.ndarray, special: np.ndarray) -> np.ndarray:
    """Scores over the max |score| of the non-special tokens (Wu & Ong's per-example normalisation); the special
    tokens ([CLS], [SEP]) get 0, so attention methods' large [CLS]/[SEP] mass cannot shrink the rest."""
    scores = np.where(special, 0.0, np.asarray(scores, dtype=np.float64))
    largest = np.abs(scores).max(initial=0.0)
    return scores / largest if largest > 0 else scores


def word_scores(token_scores: np.ndarray, words: list[Word]) -> np.ndarray:
    """Per word, the sum of its word-pieces' scores (the merge rcqa.analysis.words uses)."""
    return np.array([token_scores[list(word.tokens)].sum() for word in words], dtype=np.float64)
