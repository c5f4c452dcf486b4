"""Every per-example analysis of one Attribution, gathered into one JSON-ready dictionary."""
from __future__ import annotations

from rcqa.analysis.roles import category_shares, phase_readings, quantifier_share, top_words
from rcqa.analysis.similarity import VARIANTS, jsd_matrix
from rcqa.analysis.words import passage_distribution
from rcqa.types import Attribution


def analyses(result: Attribution, aggregation: str = "l2", k: int = 5, target: int = 0) -> dict:
    """Passage distributions, top-k words, categories, JSD matrices and quantifier shares per layer."""
    distribution = passage_distribution(result, aggregation, target)
    shares = category_shares(result, distribution, k)
    quantifier = quantifier_share(result, distribution, k)
    return {
        "aggregation": aggregation, "k": k, "target": result.targets[target]["name"],
        "passage_words": [w.text for w in result.passage_words()],
        "distribution": distribution.round(6).tolist(),
        "top_k": [[w.text for w in words] for words in top_words(result, distribution, k)],
        "categories": {name: values.round(2).tolist() for name, values in shares.items()},
        "phases": [{"layers": span, "reading": text} for span, text in phase_readings(result.layers, shares)],
        "jsd": {variant: jsd_matrix(distribution, variant, k).round(6).tolist() for variant in VARIANTS},
        "quantifier_share": None if quantifier is None else quantifier.round(2).tolist(),
    }
