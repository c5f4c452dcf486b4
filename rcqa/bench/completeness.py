"""The completeness error and the words with attribution per layer over the gallery (bench --completeness)."""
from __future__ import annotations

import numpy as np

from rcqa.analysis.words import passage_distribution
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import GALLERY
from rcqa.model import QAModel


def completeness_distribution(qa_model: QAModel, settings: ExplainSettings, k: int = 5) -> dict:
    """Over the gallery examples, per layer: the min / median / max relative completeness error, and the min /
    median number of passage words with any attribution (a layer with fewer than k has fewer top words)."""
    errors, attributed = [], []
    for example in GALLERY:
        result = explain(qa_model, example, settings)
        errors.append([max(c.relative_error for c in result.completeness if c.layer == layer)
                       for layer in range(len(result.layers))])
        attributed.append((passage_distribution(result) > 0).sum(axis=1))
    table, words = np.array(errors), np.array(attributed)
    return {"settings": settings.to_dict(), "examples": len(GALLERY), "layers": result.layers,
            "min": table.min(0).tolist(), "median": np.median(table, 0).tolist(), "max": table.max(0).tolist(),
            "share_of_layers_within_1_percent": float((table <= 0.01).mean()),
            "attributed_words_min": words.min(0).tolist(), "attributed_words_median": np.median(words, 0).tolist(),
            f"share_of_layers_with_fewer_than_{k}_top_words": float((words < k).mean())}
