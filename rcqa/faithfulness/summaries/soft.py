"""Soft comprehensiveness and soft sufficiency (Zhao & Aletras, "Incorporating Attribution Importance for Improving
Faithfulness Metrics", ACL 2023, §3): instead of deleting a ranking's top words whole, every passage word's input
embedding is scaled by its importance, so that a word half as important is half taken away.

    soft comprehensiveness = p(ŷ | x) − p(ŷ | x ⊙ (1 − q))      (higher is more faithful)
    soft sufficiency       = 1 − max(0, p(ŷ | x) − p(ŷ | x ⊙ q))  (higher is more faithful)

ŷ is the explained span and p its probability p(start) · p(end), read as the deletion test reads it
(rcqa.faithfulness.deletion); x ⊙ m multiplies each token's word embedding (the model's input embeddings, before the
position and segment embeddings are added) by its word's m. q is a word's importance: the entry's word score over the
largest deletable word's, clipped at 0 (a word scored against the answer is no part of what it rests on), so the
ranking's top word has q = 1. Only the deletable passage words are scaled (the question, the special tokens and a
spared answer are kept whole), as the deletions spare them.

Where the paper draws a Bernoulli mask on the embedding's elements with the word's importance as its probability
(random dropout), these take the mask's expectation, q itself: one deterministic forward per ranking and variant, no
sampling noise between methods, and the same number on every run. The paper's normalised forms (Soft-NC, Soft-NS,
divided by the same numbers of an emptied input) are not taken: the other summaries here are not normalised either."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from rcqa.attribution.memory import in_chunks
from rcqa.attribution.methods.base import Case
from rcqa.faithfulness.deletion import BATCH_SIZE
from rcqa.faithfulness.summaries.base import Evidence, FaithfulnessSummary
from rcqa.types import Word


def importance(word_scores: np.ndarray, deletable: Sequence[int]) -> np.ndarray:
    """Per passage word, q in [0, 1]: its score over the largest deletable word's, clipped at 0; 0 for words not
    deletable, and for every word where no deletable word scores above 0."""
    scores = np.zeros(len(word_scores))
    scores[list(deletable)] = np.clip(np.asarray(word_scores, dtype=np.float64)[list(deletable)], 0.0, None)
    largest = scores.max(initial=0.0)
    return scores / largest if largest > 0 else scores


def scaled_probabilities(case: Case, scales: np.ndarray) -> np.ndarray:
    """The explained span's probability with each token's word embedding multiplied by its scale, one forward per
    row of `scales` (variants × the window's tokens), in batches."""
    model, inputs = case.qa_model.model, case.device_inputs
    found: list[float] = []

    def batch(begin: int, end: int) -> None:
        rows = end - begin
        with torch.inference_mode():
            embedded = model.get_input_embeddings()(inputs["input_ids"])
            scale = torch.as_tensor(scales[begin:end], dtype=embedded.dtype, device=embedded.device)[..., None]
            others = {name: values.expand(rows, -1) for name, values in inputs.items() if name != "input_ids"}
            output = model(inputs_embeds=embedded * scale, **others)
        real = others["attention_mask"].bool().cpu()
        start, end_ = (logits.float().cpu().masked_fill(~real, float("-inf")).log_softmax(-1)
                       for logits in (output.start_logits, output.end_logits))
        found.extend((start[:, case.target.start_token] + end_[:, case.target.end_token]).exp().tolist())

    in_chunks(len(scales), BATCH_SIZE, batch, case.qa_model.device)
    return np.array(found)


class SoftComprehensiveness(FaithfulnessSummary):
    name = "soft_comprehensiveness"
    label = "soft comprehensiveness"
    higher_is_better = True
    source = "Zhao & Aletras's soft comprehensiveness"
    caption = ("Soft comprehensiveness: the probability lost when every word's embedding is scaled by 1 − its "
               "importance (higher is more faithful; Zhao & Aletras).")
    column = "soft comprehensiveness"
    interval_shown = True
    variants = 1

    def scale(self, q: float) -> float:
        """A deletable word's embedding scale for its importance q."""
        return 1.0 - q

    def reanswer(self, case: Case, words: Sequence[Word], deletable: Sequence[int],
                 word_scores: Sequence[np.ndarray]) -> list[np.ndarray]:
        scales = np.ones((len(word_scores), case.length))
        for row, scores in enumerate(word_scores):
            q = importance(scores, deletable)
            for index in deletable:
                scales[row, list(words[index].tokens)] = self.scale(q[index])
        return [np.array([p]) for p in scaled_probabilities(case, scales)]

    def values(self, evidence: Evidence) -> np.ndarray | None:
        if self.name not in evidence.reanswered:
            return None
        return evidence.original - evidence.reanswered[self.name][:, 0]


class SoftSufficiency(SoftComprehensiveness):
    name = "soft_sufficiency"
    label = "soft sufficiency"
    source = "Zhao & Aletras's soft sufficiency"
    caption = ("Soft sufficiency: 1 − the probability lost when every word's embedding is scaled by its importance "
               "(higher is more faithful; Zhao & Aletras).")
    column = "soft sufficiency"

    def scale(self, q: float) -> float:
        return q

    def values(self, evidence: Evidence) -> np.ndarray | None:
        if self.name not in evidence.reanswered:
            return None
        return 1.0 - np.maximum(0.0, evidence.original - evidence.reanswered[self.name][:, 0])
