"""Which heads carry the answer over a dataset (`reproduce --heads`): what a run stores per example (a compact
record of rcqa.attention_heads' HeadScores) and its averages: per score and per head the mean over the questions
with its 95 % bootstrap interval, and per score and layer the mean agreement with the knock-outs."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from rcqa.intervals import mean_with_interval

if TYPE_CHECKING:  # the head scores load torch models; the aggregates that read their records do not need them
    from rcqa.attention_heads import HeadScores

KNOCKOUT = "knockout_drop"  # the knock-out's drop in log p(span), −Δ, stored beside the scores
PRUNING = "pruning.json"  # where prune-heads writes a run's pruning curve by default


def record(found: HeadScores) -> str:
    """The row's `heads` cell (JSON): the layers, each score and the knock-out's drop (layers × heads), the flips,
    the agreement per layer, and the conservation and completeness gaps."""
    return json.dumps({"layers": found.layers, "heads": found.heads,
                       "scores": {**{name: score.tolist() for name, score in found.scores.items()},
                                  KNOCKOUT: (-found.knockout.delta_log_likelihood).tolist()},
                       "flips": found.knockout.flips.tolist(), "agreement": found.agreement(),
                       "conservation_gap": found.conservation["gap"], "completeness_gap": found.completeness["gap"]})


def importance(cells: list[dict]) -> dict[str, np.ndarray]:
    """Per score (and the knock-out's drop), its mean over the questions (layers × heads): a head's importance over
    the dataset."""
    return {name: np.mean([cell["scores"][name] for cell in cells], axis=0) for name in cells[0]["scores"]}


def cells_of(rows: pa.Table) -> list[dict]:
    """The run's `heads` cells, read (none where the run did not add them)."""
    if "heads" not in rows.column_names:
        return []
    return [json.loads(cell) for cell in rows["heads"].to_pylist() if cell]


def pruning_of(folder) -> dict | None:
    """The run's pruning curve (`prune-heads` writes it as PRUNING in the run folder), or None."""
    path = Path(folder) / PRUNING
    return json.loads(path.read_text()) if path.is_file() else None


def summarize_heads(rows: pa.Table, seed: int = 0) -> dict | None:
    """Per score: the mean per head with its interval (`mean`, `low`, `high`, each layers × heads) and the mean
    agreement with the knock-outs per layer; the share of questions where a head's knock-out flips the answer.
    None when the run stored no head scores."""
    cells = cells_of(rows)
    if not cells:
        return None
    layers, heads = cells[0]["layers"], cells[0]["heads"]
    scores = {}
    for name in cells[0]["scores"]:
        values = np.array([cell["scores"][name] for cell in cells], dtype=float)  # questions × layers × heads
        found = [[mean_with_interval(values[:, layer, head], seed) for head in range(heads)]
                 for layer in range(len(layers))]
        scores[name] = {key: [[entry[key] for entry in row] for row in found] for key in ("mean", "low", "high")}
    agreement = {name: [_mean([cell["agreement"][name][layer] for cell in cells]) for layer in range(len(layers))]
                 for name in cells[0]["agreement"]}
    flips = 100 * np.mean([cell["flips"] for cell in cells], axis=0)
    return {"n": len(cells), "layers": layers, "heads": heads, "scores": scores, "agreement": agreement,
            "flip_share": flips.tolist()}


def _mean(values: list[float | None]) -> float | None:
    defined = [value for value in values if value is not None]
    return float(np.mean(defined)) if defined else None
