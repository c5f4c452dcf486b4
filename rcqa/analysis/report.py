"""Every per-example analysis of one Attribution, gathered into one JSON-ready dictionary: the word rankings every
analysis reads, then each registered analysis computed on every explanation (rcqa.analysis.registered)."""
from __future__ import annotations

from typing import Any

from rcqa.analysis.registered import ALWAYS, ANALYSES
from rcqa.analysis.registry import Inputs
from rcqa.analysis.roles.shares import top_words
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution


def analyses(result: Attribution, aggregation: Aggregation = DEFAULT_AGGREGATION, k: int = 5, target: int = 0) -> dict:
    """Passage distributions, top-k words, categories, POS groups, JSD matrices and quantifier shares per layer.
    Undefined values (a layer with no top words, a JSD involving no distribution) are null."""
    inputs = Inputs(result, aggregation, k, target)
    found: dict[str, Any] = {}
    for name in ALWAYS:
        found |= ANALYSES[name].run(inputs).to_dict()
    return {
        "aggregation": aggregation, "k": k, "target": result.targets[target].name,
        "passage_words": [w.text for w in result.passage_words()],
        "distribution": inputs.distribution.round(6).tolist(),
        "top_k": [[w.text for w in words] for words in top_words(result, inputs.distribution, k)],
        **found,
    }
