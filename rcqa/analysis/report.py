"""Every per-example analysis of one Attribution, gathered into one JSON-ready dictionary."""
from __future__ import annotations

import numpy as np

from rcqa.analysis.pos import answer_pos, pos_shares
from rcqa.analysis.roles import (
    category_labels,
    category_shares,
    exclusive_labels,
    explains_abstention,
    phase_readings,
    quantifier_share,
    reading_shares,
    top_words,
)
from rcqa.analysis.similarity import VARIANTS, jsd_matrix
from rcqa.analysis.words import passage_distribution, top_k
from rcqa.types import Attribution


def analyses(result: Attribution, aggregation: str = "l2", k: int = 5, target: int = 0) -> dict:
    """Passage distributions, top-k words, categories, POS groups, JSD matrices and quantifier shares per layer.
    Undefined values (a layer with no top words, a JSD involving no distribution) are null."""
    distribution = passage_distribution(result, aggregation, target)
    shares = category_shares(result, distribution, k, target)
    quantifier = quantifier_share(result, distribution, k, target)
    phases = phase_readings(result.layers, reading_shares(exclusive_labels(result, target), top_k(distribution, k)),
                            explains_abstention(result, target))
    return {
        "aggregation": aggregation, "k": k, "target": result.targets[target].name,
        "passage_words": [w.text for w in result.passage_words()],
        "distribution": distribution.round(6).tolist(),
        "top_k": [[w.text for w in words] for words in top_words(result, distribution, k)],
        "categories": {name: json_list(values, 2) for name, values in shares.items()},
        "category_labels": category_labels(result, target),
        "pos": {group: json_list(values, 2) for group, values in pos_shares(result, distribution, k).items()},
        "answer_pos": answer_pos(result, target),
        "phases": [{"layers": span, "reading": text} for span, text in phases],
        "jsd": {variant: json_list(jsd_matrix(distribution, variant, k), 6) for variant in VARIANTS},
        "quantifier_share": None if quantifier is None else json_list(quantifier, 2),
    }


def json_list(values: np.ndarray, decimals: int) -> list:
    """An array as nested lists, NaN (undefined) as None, which JSON writes as null."""
    rounded = np.round(values.astype(float), decimals)
    return np.where(np.isnan(rounded), None, rounded).tolist()
