"""The published numbers a report sets ours beside (../shared/docs/paper-numbers.md), each with its source and
protocol, and the relative depth at which each was measured.

Depth is the fraction of the model's blocks below a layer's output: 0 for the embeddings, 1 for the last block.
BERT-base has 12 blocks, our default model 6, so layers are compared at equal depth, never by index. The
slides number BERT's 12 block outputs 0-11, so their layer j sits at depth (j + 1) / 12; the MLRC reproduction
lists 13 outputs from the embeddings (depth 0) to block 12 (depth 1).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from rcqa.dataset.summary import DatasetSummary

PAPER = "Ramnath et al. 2020 (slides in the authors' repository): BERT-base, SQuAD v1.1 dev F1 88.7, zero " \
        "baseline at the layer, top-5 words, first 1,000 dev examples"
MLRC = "MLRC 2020 reproduction (gchhablani): BERT-base, F1 88.51, Captum layer IG with 25 right-Riemann steps, " \
       "predicted answer, start + end summed, word = sum of its word-pieces, 1,000 dev examples"


@dataclass(frozen=True)
class Published:
    """One published value: what it measures, at which depth (None: not per layer), and where it comes from."""

    measure: str
    value: float
    source: str
    depth: float | None = None


def depth(layer: int, n_layers: int) -> float:
    """The relative depth of output `layer` of a model with n_layers outputs (embeddings first)."""
    return layer / (n_layers - 1) if n_layers > 1 else 0.0


ROLE_SHARES = [  # % of the top-5 words, SQuAD, first and last output
    Published("answer", 38.10, MLRC, 0.0), Published("answer", 42.94, MLRC, 1.0),
    Published("supporting", 32.96, MLRC, 0.0), Published("supporting", 34.02, MLRC, 1.0),
    Published("query", 22.46, MLRC, 0.0), Published("query", 10.42, MLRC, 1.0),
]
JSD_RANGES = {  # off-diagonal range of the layer x layer JSD map, SQuAD
    "topk_kept": {"min": Published("jsd min", 0.07, PAPER), "max": Published("jsd max", 0.6, PAPER)},
    "topk_removed": {"min": Published("jsd min", 0.09, PAPER), "max": Published("jsd max", 0.21, PAPER)},
}
QUANTIFIER_RATIO = [  # % of the passage's numbers among the top-5 words, quantifier questions, SQuAD
    Published("quantifier ratio", 5.6, PAPER, 1 / 12), Published("quantifier ratio", 17.7, PAPER, 11 / 12),
    Published("quantifier ratio", 15.5, PAPER, 1.0),
    Published("quantifier ratio", 6.56, MLRC, 0.0), Published("quantifier ratio", 9.93, MLRC, 1.0),
]
QUANTIFIER = {"exact_match": Published("EM on quantifier questions", 87.35, PAPER),
              "confidence": Published("mean confidence on quantifier questions", 85.0, PAPER),
              "n_questions": Published("quantifier questions in SQuAD v1.1 dev (all 10,570)", 799, PAPER)}
SCORES = {"f1": Published("SQuAD v1.1 dev F1", 88.51, MLRC)}


def comparison(summary: DatasetSummary) -> pd.DataFrame:
    """Our numbers beside each published one at the same relative depth (the nearest of our layers)."""
    layers = len(summary.layers)

    def at_depth(values: list, wanted: float | None):
        assert wanted is not None  # ROLE_SHARES and QUANTIFIER_RATIO are measured per layer, each at a depth
        if not values:
            return None
        return values[min(range(layers), key=lambda i: abs(depth(i, layers) - wanted))]

    rows = [(f"{p.measure} share of top-k at depth {p.depth:g}", at_depth(summary.roles[p.measure], p.depth), p)
            for p in ROLE_SHARES]
    rows += [(f"quantifier ratio at depth {p.depth:.2f}", at_depth(summary.quantifier["ratio"], p.depth), p)
             for p in QUANTIFIER_RATIO]
    rows += [(f"JSD {variant.replace('_', ' ')}, {end} off the diagonal", summary.jsd_range[variant][end], p)
             for variant, ends in JSD_RANGES.items() for end, p in ends.items()]
    rows += [(p.measure, summary.quantifier[key], p) for key, p in QUANTIFIER.items()]
    rows += [(p.measure, getattr(summary, key), p) for key, p in SCORES.items()]
    return pd.DataFrame([{"measure": measure, "ours": ours, "published": p.value, "source": p.source}
                         for measure, ours, p in rows])
