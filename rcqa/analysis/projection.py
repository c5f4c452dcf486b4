"""2-D views of one layer's token vectors, coloured with the paper's groups."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from rcqa.types import Attribution, overlaps

GROUPS = {"answer": "#d62728", "[CLS]/[SEP]": "#111111", "question": "#2ca02c", "answer sentence": "#1f77b4",
          "other": "#b0b0b0"}
PROJECTIONS = ("tsne", "pca")


@dataclass(frozen=True)
class Projection:
    """A 2-D map of token vectors and what its two axes are."""

    points: np.ndarray  # tokens × 2
    axes: tuple[str, str]
    perplexity: float | None = None  # t-SNE's, as used: the paper's 40, capped at (tokens − 1) / 3


# measured with one thread on this project's 2 shared cores: t-SNE 1.0 s for 100 and 384 tokens, 2.2 s for 700
# (Barnes–Hut: about n log n); PCA under 0.05 s for 700 tokens of 384 dimensions
TSNE_SECONDS, TSNE_SECONDS_PER_TOKEN, PCA_SECONDS = 1.0, 0.004, 0.1


def projection_seconds(method: str, tokens: int) -> float:
    """What projecting `tokens` token vectors is expected to take on one core (measured: the constants above)."""
    return PCA_SECONDS if method == "pca" else max(TSNE_SECONDS, TSNE_SECONDS_PER_TOKEN * tokens)


def project(vectors: np.ndarray, method: str = "tsne", perplexity: float = 40.0, seed: int = 0) -> Projection:
    """tokens × dim → tokens × 2. t-SNE as in the paper (perplexity 40, seed 0, capped for short inputs), or PCA,
    whose axes say how much of the vectors' variance each component holds."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if method == "pca":
        centred = vectors - vectors.mean(axis=0)
        _, singular_values, components = np.linalg.svd(centred, full_matrices=False)
        shares = singular_values[:2] ** 2 / max(float((singular_values ** 2).sum()), 1e-300)
        first, second = (f"Principal component {i + 1} ({share:.0%} of variance)" for i, share in enumerate(shares))
        return Projection(centred @ components[:2].T, (first, second))
    if method == "tsne":
        from sklearn.manifold import TSNE

        perplexity = min(perplexity, max(1.0, (len(vectors) - 1) / 3))
        points = TSNE(n_components=2, perplexity=perplexity, random_state=seed, init="pca").fit_transform(vectors)
        return Projection(points, ("t-SNE 1", "t-SNE 2"), perplexity)
    raise ValueError(f"unknown projection {method!r}; choose one of {', '.join(PROJECTIONS)}")


def token_groups(result: Attribution) -> list[str]:
    """The paper's colouring: the explained span (the predicted answer by default); [CLS]/[SEP]; question; the
    span's sentence; the rest."""
    span_start, span_end = result.explained_span()
    sentence = _sentence_around(result.example.passage, span_start)
    groups = []
    for (start, end), segment in zip(result.token_offsets, result.token_segments):
        if segment == "special":
            groups.append("[CLS]/[SEP]")
        elif segment == "question":
            groups.append("question")
        elif overlaps(span_start, span_end, start, end):
            groups.append("answer")
        elif sentence[0] <= start < sentence[1]:
            groups.append("answer sentence")
        else:
            groups.append("other")
    return groups


def _sentence_around(passage: str, position: int) -> tuple[int, int]:
    starts = [0] + [m.end() for m in re.finditer(r"[.!?][\"')\]]*\s+", passage)]
    begin = max(s for s in starts if s <= position)
    following = [s for s in starts if s > position]
    return begin, following[0] if following else len(passage)
