"""What each layer knows and does, over a dataset: the answer lens's EM / F1 per layer (at which depth is the
answer decided?) and the knock-outs' flip rates per layer, top-k against random and bottom-k (does a layer's role
hold when we intervene?). Means are over the examples that define a value."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from rcqa.intervals import defined_means, nullable
from rcqa.lens.readout import READERS

DECIDED = 0.9  # a reader has decided the answer at the first layer reaching this share of its last layer's F1


def _cells(rows: pa.Table, column: str) -> list[dict]:
    if column not in rows.column_names:
        return []
    return [json.loads(cell) for cell in rows[column].to_pylist() if cell]


def _mean_per_layer(lists: list[list], scale: float = 1.0) -> list[float | None]:
    """Per layer, the mean of the examples' defined values (times scale: 100 for %); None where none is defined."""
    table = np.array([[np.nan if v is None else float(v) for v in values] for values in lists], dtype=float)
    return nullable(scale * defined_means(table))


def decided_at(f1: list[float | None]) -> int | None:
    """The first layer whose F1 reaches DECIDED of the last layer's (None when undefined)."""
    if not f1 or f1[-1] is None or f1[-1] <= 0:
        return None
    return next(i for i, value in enumerate(f1) if value is not None and value >= DECIDED * f1[-1])


def summarize_lens(rows: pa.Table) -> dict | None:
    """Per reader: EM and F1 (%) per layer against gold, the share (%) of examples whose layer already ranks the final
    answer first, and the layer where the reader has decided; None when the run has no lens."""
    cells = _cells(rows, "lens")
    if not cells:
        return None
    found = {}
    for reader in READERS:
        present = [c for c in cells if c.get(f"lens_{reader}_span") is not None]
        if not present:
            continue
        f1 = _mean_per_layer([c[f"lens_{reader}_f1"] for c in present], 100)
        found[reader] = {
            "n": len(present),
            "exact_match": _mean_per_layer([c[f"lens_{reader}_em"] for c in present], 100),
            "f1": f1,
            "final_answer_first": _mean_per_layer(
                [[rank == 1 for rank in c[f"lens_{reader}_final_answer_rank"]] for c in present], 100),
            "decided_at": decided_at(f1),
        }
    return found


def summarize_interventions(rows: pa.Table) -> dict | None:
    """Per layer: the flip rate (%) and mean probability when its top-k, k random or bottom-k words are knocked out,
    and when the block is skipped; None when the run has no interventions."""
    cells = _cells(rows, "interventions")
    if not cells:
        return None

    def percent(key: str) -> list[float | None]:
        return _mean_per_layer([c[key] for c in cells], 100)

    return {
        "n": len(cells), "k": cells[0]["knockout_k"], "baseline": cells[0]["knockout_baseline"],
        "outside_span": cells[0].get("knockout_outside_span", False),  # runs before the field chose any passage word
        "unchanged_probability": float(np.mean([c["knockout_unchanged_probability"] for c in cells])),
        "flip_rate": {"topk": percent("knockout_topk_flipped"), "random": percent("knockout_random_flip_rate"),
                      "bottomk": percent("knockout_bottomk_flipped"), "skip_block": percent("skip_block_flipped")},
        "probability": {"topk": _mean_per_layer([c["knockout_topk_probability"] for c in cells]),
                        "random": _mean_per_layer([c["knockout_random_probability_mean"] for c in cells]),
                        "bottomk": _mean_per_layer([c["knockout_bottomk_probability"] for c in cells]),
                        "skip_block": _mean_per_layer([c["skip_block_probability"] for c in cells])},
    }
