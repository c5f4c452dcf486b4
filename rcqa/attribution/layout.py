"""The whole passage's token sequence (PassageLayout) and the merge of every window's token scores into it.

The merge. Question tokens and specials are in every window, and a passage token in the overlap of two windows
is in both: each copy is a different state, and each carries part of F. A token of the whole passage is all its
copies, so its attribution is all its copies' attribution vectors together: the signed and absolute sums and the
squared norm add over the copies, and the L2 norm is the norm of them all, sqrt(Σ copies' L2²). Nothing is dropped,
so the signed sums of the whole passage's tokens still add up to F(input) − F(baseline), and where one window
carries the whole target the merged scores are that window's.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rcqa.spans import Windows
from rcqa.types import AGGREGATIONS


@dataclass(frozen=True)
class PassageLayout:
    """The whole passage's token sequence: window 0's question and specials, every passage token once, in order,
    then window 0's closing specials; and where each window's tokens are in it."""

    ids: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    segments: tuple[str, ...]
    positions: tuple[tuple[int, ...], ...]  # per window and token: its index in the whole passage's sequence

    @classmethod
    def of(cls, windows: Windows) -> PassageLayout:
        lengths = windows.inputs["attention_mask"].sum(1).tolist()
        ids = windows.inputs["input_ids"].tolist()
        parts = [_parts(windows.segments[w][:n]) for w, n in enumerate(lengths)]
        first, last = parts[0]
        prefix, suffix = ids[0][:first], ids[0][last:lengths[0]]
        if any(ids[w][:f] != prefix or ids[w][l:lengths[w]] != suffix for w, (f, l) in enumerate(parts)):
            raise ValueError("the windows do not share their question and special tokens")
        passage_offsets = [windows.offsets[w][f:l] for w, (f, l) in enumerate(parts)]
        starts = _passage_starts(passage_offsets)
        n_passage = starts[-1] + len(passage_offsets[-1])
        passage_ids = [0] * n_passage
        merged_offsets: list[tuple[int, int] | None] = [None] * n_passage
        for w, ((f, l), start) in enumerate(zip(parts, starts)):
            for j in range(l - f):
                passage_ids[start + j], merged_offsets[start + j] = ids[w][f + j], windows.offsets[w][f + j]
        covered = [offsets for offsets in merged_offsets if offsets is not None]
        assert len(covered) == n_passage  # the windows overlap, so every passage token is in one
        shared = len(prefix) + n_passage
        positions = tuple(tuple(range(f)) + tuple(len(prefix) + start + j for j in range(l - f))
                          + tuple(shared + i for i in range(lengths[w] - l))
                          for w, ((f, l), start) in enumerate(zip(parts, starts)))
        return cls(ids=tuple(prefix + passage_ids + suffix),
                   offsets=tuple(windows.offsets[0][:first]) + tuple(covered)
                   + tuple(windows.offsets[0][last:lengths[0]]),
                   segments=tuple(windows.segments[0][:first]) + ("passage",) * n_passage
                   + tuple(windows.segments[0][last:lengths[0]]),
                   positions=positions)

    def __len__(self) -> int:
        return len(self.ids)

    def merge(self, scores: np.ndarray) -> np.ndarray:
        """(…, aggregations, every window's tokens, window after window) → (…, aggregations, the passage's tokens):
        each token's copies added, the L2 norm as the norm of all copies' vectors (the module's docstring)."""
        l2 = AGGREGATIONS.index("l2")
        additive = scores.astype(np.float64)
        additive[..., l2, :] = additive[..., l2, :] ** 2
        merged = np.zeros((len(self), *additive.shape[:-1]))
        np.add.at(merged, np.concatenate(self.positions), np.moveaxis(additive, -1, 0))
        merged = np.moveaxis(merged, 0, -1)
        merged[..., l2, :] = np.sqrt(merged[..., l2, :])
        return merged


def _parts(segments: Sequence[str]) -> tuple[int, int]:
    """[first, last) of a window's passage tokens, which are contiguous."""
    inside = [t for t, segment in enumerate(segments) if segment == "passage"]
    if not inside or inside != list(range(inside[0], inside[-1] + 1)):
        raise ValueError("a window's passage tokens are not one contiguous run")
    return inside[0], inside[-1] + 1


def _passage_starts(passage_offsets: list[list[tuple[int, int]]]) -> list[int]:
    """Per window: the index of its first passage token among the passage's tokens. A window starts inside the one
    before it: by the longest run of tokens that ends the one and begins the other (the stride's overlap)."""
    starts = [0]
    for before, window in zip(passage_offsets, passage_offsets[1:]):
        overlap = next(k for k in range(min(len(before), len(window)), -1, -1) if before[len(before) - k:] == window[:k])
        starts.append(starts[-1] + len(before) - overlap)
    return starts
