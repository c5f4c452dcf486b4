"""From token scores to word scores, and the paper's per-layer distribution over passage words."""
from __future__ import annotations

import numpy as np

from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution


def group_scores(result: Attribution, groups: list[tuple[int, ...]], aggregation: Aggregation = DEFAULT_AGGREGATION,
                 target: int = 0) -> np.ndarray:
    """(layers × groups): each group of tokens scores the sum of its tokens' scores (a word: its word-pieces, the
    paper's merge; a special token: itself)."""
    tokens = result.layer_scores(aggregation, target)
    return np.stack([tokens[:, list(group)].sum(axis=1) for group in groups], axis=1)


def word_scores(result: Attribution, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> np.ndarray:
    """(layers × words): each word's score is the sum of its word-pieces' scores (the paper's merge)."""
    return group_scores(result, [word.tokens for word in result.words], aggregation, target)


def normalised(scores: np.ndarray) -> np.ndarray:
    """|scores| normalised to sum 1 per layer (row). A row that scores 0 throughout has no distribution: it stays all
    zeros (see is_empty)."""
    magnitudes = np.abs(scores).astype(np.float64)
    totals = magnitudes.sum(axis=1, keepdims=True)
    return np.divide(magnitudes, totals, out=np.zeros_like(magnitudes), where=totals > 0)


def distribution(result: Attribution, words: list[int], aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> np.ndarray:
    """(layers × chosen words): |word score| normalised to sum 1 per layer over the chosen words. A layer whose
    chosen words all score 0 has no distribution: its row is all zeros (see is_empty)."""
    return normalised(word_scores(result, aggregation, target)[:, words])


def passage_distribution(result: Attribution, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> np.ndarray:
    """(layers × passage words): the paper's I_l, a distribution over the passage words per layer."""
    return distribution(result, result.passage_indices(), aggregation, target)


def is_empty(distribution: np.ndarray) -> np.ndarray:
    """Per layer: whether no word has any attribution (the row is no distribution at all)."""
    return np.logical_not((distribution > 0).any(axis=1))


def ranks(distribution: np.ndarray) -> np.ndarray:
    """Rank of every word in its layer, 1 = most important."""
    order = np.argsort(-distribution, axis=1, kind="stable")
    ranked = np.empty_like(order)
    rows = np.arange(distribution.shape[0])[:, None]
    ranked[rows, order] = np.arange(1, distribution.shape[1] + 1)[None, :]
    return ranked


def top_k(distribution: np.ndarray, k: int) -> list[np.ndarray]:
    """Per layer, the indices of its (at most) k most important words, best first. A word with no attribution
    is never a top word, so a layer with fewer than k such words has fewer top words."""
    order = np.argsort(-distribution, axis=1, kind="stable")[:, :k]
    return [row[distribution[layer, row] > 0] for layer, row in enumerate(order)]
