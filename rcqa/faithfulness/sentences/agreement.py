"""One explanation's sentence scores against the model's own sentence ablations, layer by layer.

Only the context is compared: the passage's sentences other than the one holding the answer, since deleting that
one takes the answer away and so tops every reference by construction. Each measure has a random sentence's value
worked out exactly, so that a method is read against random under one rule: Spearman's ρ of a random ranking is 0,
its top sentence is leaving-one-out's top one with probability 1/n, and deleting a random context sentence lowers
the answer's probability by the mean of the context sentences' drops.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from rcqa.faithfulness.sentences.ablation import SentenceAblation, Surrogate
from rcqa.types import overlaps
from rcqa.types.granularity import UnitScores

# measure → what a random ranking of the context sentences scores on it, given the check (module docstring)
MEASURES = ("rho_leave_one_out", "top1_leave_one_out", "top_sentence_drop", "rho_surrogate")


@dataclass(frozen=True)
class SentenceCheck:
    """Per layer (None where undefined: fewer than 2 context sentences, 3 for a ρ, or a side constant):
    rho_leave_one_out: Spearman's ρ of the sentences' |score| with how much deleting each lowers the answer's
    probability; top1_leave_one_out: 1 where the top-scored sentence is the one whose deletion lowers it most, else 0;
    top_sentence_drop: how much deleting the top-scored sentence lowers it; rho_surrogate: Spearman's ρ with
    ContextCite's surrogate weights (None without a surrogate). random_drop: what deleting a random context
    sentence lowers it by, the mean drop."""

    context_sentences: int
    rho_leave_one_out: list[float | None]
    top1_leave_one_out: list[float | None]
    top_sentence_drop: list[float | None]
    rho_surrogate: list[float | None]
    random_drop: float | None

    def random_value(self, measure: str) -> float | None:
        """What a random ranking of the context sentences scores on `measure`, in expectation."""
        if self.context_sentences < 2:
            return None
        return {"rho_leave_one_out": 0.0, "rho_surrogate": 0.0, "top1_leave_one_out": 1 / self.context_sentences,
                "top_sentence_drop": self.random_drop}[measure]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> SentenceCheck:
        return cls(**data)


def sentence_check(result, ablation: SentenceAblation, surrogate: Surrogate | None = None,
                   aggregation: str = "l2") -> SentenceCheck:
    """The explanation's passage sentences (rcqa.types.granularity, by |score| under `aggregation`) against leaving
    each out and, where given, the surrogate fitted to the same passage's sentences."""
    units = result.granularity("sentence", aggregation)
    compared = {sentence: unit for sentence, unit in read_sentences(units, ablation.sentences).items()
                if not overlaps(*ablation.sentences[sentence], *ablation.answer_chars)}  # the context's
    sentences = sorted(compared)
    scores = np.abs(units.scores[:, [compared[s] for s in sentences]]).astype(np.float64)
    drops = ablation.drops[sentences]
    weights = None if surrogate is None else np.asarray(surrogate.weights)[sentences]
    defined = len(sentences) >= 2
    tops = [int(np.argmax(row)) if defined and np.any(row > 0) else None for row in scores]
    return SentenceCheck(
        context_sentences=len(sentences),
        rho_leave_one_out=[_spearman(row, drops) for row in scores],
        top1_leave_one_out=[None if top is None else float(top == int(np.argmax(drops))) for top in tops],
        top_sentence_drop=[None if top is None else float(drops[top]) for top in tops],
        rho_surrogate=[None if weights is None else _spearman(row, weights) for row in scores],
        random_drop=float(drops.mean()) if defined else None)


def read_sentences(units: UnitScores, sentences: list[tuple[int, int]]) -> dict[int, int]:
    """Each of `sentences` (characters of the passage) that the explanation reads → its passage unit there (the
    first to begin inside it)."""
    found: dict[int, int] = {}
    for unit in units.passage_units():
        start = units.units[unit].start_char
        sentence = next((index for index, (a, b) in enumerate(sentences) if a <= start < b), None)
        if sentence is not None:
            found.setdefault(sentence, unit)
    return found


def _spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic) if len(a) >= 3 and np.ptp(a) > 0 and np.ptp(b) > 0 else None
