"""ERASER's comprehensiveness and sufficiency (DeYoung et al., ACL 2020), over its bins of the passage's words
(rcqa.faithfulness.metrics holds the formulas)."""
from __future__ import annotations

import numpy as np

from rcqa.faithfulness.metrics import comprehensiveness, sufficiency
from rcqa.faithfulness.summaries.base import Evidence, FaithfulnessSummary


class Comprehensiveness(FaithfulnessSummary):
    name = "comprehensiveness"
    label = "comprehensiveness"
    higher_is_better = True
    source = "ERASER's comprehensiveness"
    caption = ("Comprehensiveness: the probability lost when the top 1, 5, 10, 20, 50 % of the words are deleted "
               "(higher is more faithful; ERASER).")
    column = "comprehensiveness"

    def values(self, evidence: Evidence) -> np.ndarray:
        return np.array([comprehensiveness(evidence.original, row) for row in evidence.without_top])


class Sufficiency(FaithfulnessSummary):
    name = "sufficiency"
    label = "sufficiency"
    higher_is_better = False  # the probability lost with only the top words kept
    source = "ERASER's sufficiency"
    caption = "Sufficiency: the probability lost when only they are kept (lower is more faithful; ERASER)."
    column = "sufficiency"

    def values(self, evidence: Evidence) -> np.ndarray:
        return np.array([sufficiency(evidence.original, row) for row in evidence.only_top])
