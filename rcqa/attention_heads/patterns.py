"""What a head does: where its attention goes from the answer's tokens, from [CLS] and from the question's tokens,
over the window's passage, and whether it looks from the question at the answer.

The probabilities come from one forward of a private copy of the model (eager attention, its own config and hooks,
as rcqa.attribution.methods.attention.attention_maps runs it), so the shared model is never changed. Only the rows
that are read are kept (the question's tokens, [CLS] and the answer span's): a window of 384 tokens would hold
layers × heads × 384² numbers.

The flag: a head **looks from the question at the answer** when the mean, over the question's tokens, of the
attention mass each puts on the answer span's tokens is at least FLAG_RATIO times the uniform share (the span's
tokens over the window's tokens: what a head attending evenly would put there).
"""
from __future__ import annotations

from dataclasses import dataclass

import copy
import itertools

import numpy as np
import torch

from rcqa.adapter.calls import config_of
from rcqa.attention_heads.scores import HeadCase
from rcqa.model import QAModel

FLAG_RATIO = 2.0  # a head flagged puts at least this many times the uniform share on the answer span
ANSWER, CLS, QUESTION = "answer", "[CLS]", "question"  # where the rows of a pattern attend from


@dataclass(frozen=True)
class HeadPatterns:
    """Every head's attention from the kept rows (`sources`: token positions) to every token of the window."""

    tokens: list[str]
    sources: list[int]  # the token positions whose attention is kept, in order
    attention: np.ndarray  # layers × heads × len(sources) × tokens; each row sums to 1
    question: list[int]  # token positions of the question, of the passage, and of the answer span
    passage: list[int]
    span: list[int]

    def rows(self, layer: int, head: int, positions: list[int]) -> np.ndarray:
        """The head's attention from these token positions (each one of `sources`) to every token."""
        return self.attention[layer, head, [self.sources.index(p) for p in positions]]

    def pattern(self, layer: int, head: int) -> tuple[list[str], np.ndarray]:
        """Rows named for where they attend from (the answer span's tokens, their mean; [CLS]; each question
        token) and their attention over the passage's tokens (columns: `passage`)."""
        labels = [f"{ANSWER} (mean of its {len(self.span)} tokens)", CLS,
                  *(f"{QUESTION}: {self.tokens[p]}" for p in self.question)]
        rows = np.vstack([self.rows(layer, head, self.span).mean(axis=0), self.rows(layer, head, [0]),
                          self.rows(layer, head, self.question)])
        return labels, rows[:, self.passage]

    def top_attended(self, layer: int, head: int, k: int = 5) -> dict[str, list[tuple[str, float]]]:
        """Per source (the answer span, [CLS], the question: each a mean over its tokens), the k passage tokens it
        attends to most, with their attention."""
        means = {ANSWER: self.span, CLS: [0], QUESTION: self.question}
        found = {}
        for name, positions in means.items():
            over_passage = self.rows(layer, head, positions).mean(axis=0)[self.passage]
            order = np.argsort(-over_passage, kind="stable")[:k]
            found[name] = [(self.tokens[self.passage[i]], float(over_passage[i])) for i in order]
        return found

    def question_to_answer(self) -> np.ndarray:
        """layers × heads: the mean over the question's tokens of the attention mass each puts on the answer span."""
        at = [self.sources.index(p) for p in self.question]
        return self.attention[:, :, at][..., self.span].sum(axis=-1).mean(axis=-1)

    @property
    def uniform_share(self) -> float:
        """The mass a head attending evenly over the window would put on the answer span."""
        return len(self.span) / len(self.tokens)

    def flagged(self) -> np.ndarray:
        """layers × heads: whether the head looks from the question at the answer (the module's rule)."""
        return self.question_to_answer() >= FLAG_RATIO * self.uniform_share


def head_patterns(qa_model: QAModel, case: HeadCase) -> HeadPatterns:
    """Every head's attention in the case's window from its [CLS], question and answer-span tokens."""
    segments = case.window.segments[0]
    question = [i for i, segment in enumerate(segments) if segment == "question"]
    passage = [i for i, segment in enumerate(segments) if segment == "passage"]
    span = list(range(case.span.start_token, case.span.end_token + 1))
    sources = sorted({0, *question, *span})
    rows = source_rows(qa_model.model, {key: value.to(qa_model.device) for key, value in case.inputs.items()},
                       sources)
    return HeadPatterns(case.tokens, sources, rows, question, passage, span)


def source_rows(model: torch.nn.Module, inputs: dict[str, torch.Tensor], sources: list[int]) -> np.ndarray:
    """layers × heads × len(sources) × tokens: each block's attention from the source positions, as
    rcqa.attribution.methods.attention.attention_maps computes every row (its private eager copy), the rows kept
    taken from each block's maps before they are stacked: stacking every row, then in float64, held 4 times the
    maps (+169 MB at 384 tokens of the default model, 0.9 GB for BERT-large's 24 blocks of 16 heads)."""
    weights = {id(tensor): tensor for tensor in itertools.chain(model.parameters(), model.buffers())}
    private = copy.deepcopy(model, memo=weights)
    config_of(private)._attn_implementation = "eager"
    with torch.no_grad():
        attentions = private(**inputs, output_attentions=True).attentions
    kept = torch.tensor(sources, device=attentions[0].device)
    return torch.stack([layer[0].index_select(1, kept) for layer in attentions]).double().cpu().numpy()
