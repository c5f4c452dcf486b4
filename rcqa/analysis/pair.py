"""Two explanations of one passage side by side, layer by layer: both word distributions on one word axis, their
difference, the Jensen–Shannon divergence between them at each layer, and each one's roles.

The two may differ in anything but the passage: the span explained (predicted against gold), the model (`default`
against `default-squad2`), the foil of a contrast. `compare(a, b)` builds the pair; it shows itself as a result
does (show, and in Jupyter _repr_html_) and saves to one .npz file that `SideBySide.load` reads back.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from rcqa.analysis.roles.shares import exclusive_labels, reading_shares
from rcqa.analysis.similarity import jensen_shannon
from rcqa.analysis.words import passage_distribution, top_k
from rcqa import drawing
from rcqa.types import AGGREGATIONS, DEFAULT_AGGREGATION, Aggregation, Attribution, storage

PAIR_VIEWS = ("heatmaps", "jsd", "roles")  # what SideBySide.show draws


def describe(result: Attribution, target: int = 0) -> str:
    """A short name for what one explanation explains: its model, its target, which span, and a contrast's foil."""
    chosen = result.targets[target]
    span = result.settings.span
    which = {"predicted": "the answer", "gold": "the gold span"}.get(span.kind, f"n-best span #{span.rank + 1}")
    against = "" if chosen.foil is None else f" vs “{chosen.foil.text or 'no answer'}”"
    return f"{result.model}: {chosen.name} of {which} “{chosen.span}”{against}"


@dataclass
class SideBySide:
    """Two explanations of the same passage, compared at every layer over the passage words either of them reads.

    Shares are each result's own passage distribution (the paper's I_l: a layer's |attribution| over its window's
    passage words, summing to 1); a word the other result's window does not hold has no share there (NaN in
    `shares`, 0 in the JSD, since that explanation puts no attribution on it)."""

    a: Attribution
    b: Attribution
    labels: tuple[str, str] = ("", "")
    aggregation: Aggregation = DEFAULT_AGGREGATION
    k: int = 5

    def __post_init__(self):
        if self.a.example.passage != self.b.example.passage:
            raise ValueError("the two explanations are of different passages; side by side compares two "
                             "explanations of one passage")
        if len(self.a.layers) != len(self.b.layers):
            raise ValueError(f"the two explanations have {len(self.a.layers)} and {len(self.b.layers)} layers; side "
                             "by side compares them layer by layer, so their models need as many layers")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {self.aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
        if self.k < 1:
            raise ValueError("k is at least 1")
        self.labels = tuple(label or describe(result) for label, result in zip(self.labels, (self.a, self.b)))

    @property
    def same_question_asked(self) -> bool:
        """Whether both sides explain the same thing (model, window, targets and their spans): then B repeats A, as
        the gold span does when the model answers it exactly."""
        return (self.a.fingerprint == self.b.fingerprint and self.a.window == self.b.window
                and self.a.targets == self.b.targets)

    @property
    def layers(self) -> list[str]:
        return self.a.layers

    @cached_property
    def words(self) -> list[tuple[int, int, str]]:
        """The word axis: (start_char, end_char, text) of every passage word either result reads, in text order."""
        found = {(w.start_char, w.end_char): w.text for result in (self.a, self.b) for w in result.passage_words()}
        return [(start, end, text) for (start, end), text in sorted(found.items())]

    def _on_axis(self, result: Attribution) -> np.ndarray:
        """(layers × axis words): the result's passage distribution, NaN at words its window does not hold."""
        column = {(start, end): i for i, (start, end, _) in enumerate(self.words)}
        placed = np.full((len(self.layers), len(self.words)), np.nan)
        own = [column[(w.start_char, w.end_char)] for w in result.passage_words()]
        placed[:, own] = passage_distribution(result, self.aggregation)
        return placed

    @cached_property
    def shares(self) -> tuple[np.ndarray, np.ndarray]:
        """Each result's distribution on the common word axis (layers × words), NaN where it does not read a word."""
        return self._on_axis(self.a), self._on_axis(self.b)

    @property
    def difference(self) -> np.ndarray:
        """b's share − a's share per layer and word (a word only one of them reads counts 0 on the other side)."""
        first, second = (np.nan_to_num(shares) for shares in self.shares)
        return second - first

    @cached_property
    def jsd(self) -> np.ndarray:
        """Per layer, the Jensen–Shannon divergence (bits) between the two distributions; NaN where either layer
        has no attribution on any passage word."""
        first, second = (np.nan_to_num(shares) for shares in self.shares)
        return np.array([jensen_shannon(p, q) for p, q in zip(first, second)])

    @cached_property
    def roles(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Each result's roles per layer: the % of its top-k passage words that are answer, supporting, query, foil
        or other words, each word counted once (rcqa.analysis.roles.shares.reading_shares)."""
        first, second = (reading_shares(exclusive_labels(result), top_k(passage_distribution(result, self.aggregation),
                                                                        self.k)) for result in (self.a, self.b))
        return first, second

    def show(self, view: str = "heatmaps"):
        """The Plotly figure of one of PAIR_VIEWS: "heatmaps" (both on one word axis and their difference), "jsd"
        (per layer) or "roles" (each one's), drawn by rcqa.figures (rcqa.drawing)."""
        return drawing.figure(self, view)

    def _repr_html_(self) -> str:
        return drawing.html(self)

    def save(self, path: str | Path) -> Path:
        """Both results (exactly, as Attribution.to_npz writes them) and the pair's labels and settings, in one .npz
        file."""
        path = Path(path)
        if path.suffix != ".npz":
            raise ValueError(f"save a side-by-side as .npz, not {path.name!r}")
        meta = {"labels": list(self.labels), "aggregation": self.aggregation, "k": self.k}
        path.write_bytes(storage.npz_bytes(meta, {side: np.frombuffer(result.to_npz(), dtype=np.uint8)
                                                  for side, result in (("a", self.a), ("b", self.b))}))
        return path

    @classmethod
    def load(cls, path: str | Path) -> SideBySide:
        """A side-by-side that save wrote."""
        meta, stored = storage.read_npz(path)
        a, b = (Attribution.from_npz(io.BytesIO(stored[side].tobytes())) for side in ("a", "b"))
        return cls(a, b, tuple(meta["labels"]), meta["aggregation"], meta["k"])


def compare(result_a: Attribution, result_b: Attribution, labels: tuple[str, str] = ("", ""),
            aggregation: Aggregation = DEFAULT_AGGREGATION, k: int = 5) -> SideBySide:
    """Two explanations of one passage side by side (see SideBySide); `labels` name them (default: what each
    explains, rcqa.analysis.pair.describe)."""
    return SideBySide(result_a, result_b, labels, aggregation, k)
