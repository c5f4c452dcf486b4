"""How far an explanation has come, as the share of its work done (rcqa.attribution.cost's model): the layer at
the output of block l runs its path points through the L − l blocks above it, and its head, so the embeddings
weigh most and a bar counted in layers would sit near empty through the longest part of the wait."""
from __future__ import annotations

import numpy as np

from rcqa.attribution.engine import LayerResult
from rcqa.attribution.passage import WindowProgress

# a layer still under way is never shown as done: the adaptive rule may refine it past the points expected
_UNDER_WAY_AT_MOST = 0.95


def layer_work(blocks: int) -> np.ndarray:
    """Each layer's share of an explanation's work, embeddings first: L − l blocks and the head, normalised."""
    work = blocks - np.arange(blocks + 1) + 1.0
    return work / work.sum()


def explained_fraction(done: LayerResult | WindowProgress, blocks: int, expected_points: float) -> float:
    """The share of the work done once `done` is heard: every layer below it, and for a whole-passage layer under
    way its path points done of those expected (capped below 1: it may take more)."""
    work = layer_work(blocks)
    before = float(work[:done.layer].sum())
    if isinstance(done, LayerResult):
        return before + float(work[done.layer])
    under_way = min(done.points / max(expected_points, 1.0), _UNDER_WAY_AT_MOST)
    return before + float(work[done.layer]) * under_way
