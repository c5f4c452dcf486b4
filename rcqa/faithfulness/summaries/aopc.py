"""The area over the deletion curve (Samek et al., 2017) and its normalisation by the best and worst orderings
(Edin et al., ACL 2025); rcqa.faithfulness.metrics holds the formulas and the search for the bounds."""
from __future__ import annotations

import numpy as np

from rcqa.faithfulness.metrics import aopc, normalised_aopc
from rcqa.faithfulness.summaries.base import Evidence, FaithfulnessSummary


class AOPC(FaithfulnessSummary):
    name = "aopc"
    label = "AOPC"
    higher_is_better = True
    source = "Samek's AOPC"
    caption = "AOPC: the mean probability lost over k = 0 … 10 words deleted (higher is more faithful; Samek et al.)."
    column = "aopc"
    interval_shown = True

    def values(self, evidence: Evidence) -> np.ndarray:
        return np.array([aopc(evidence.original, row) for row in evidence.curve])


class NormalisedAOPC(FaithfulnessSummary):
    name = "naopc"
    label = "normalised AOPC"
    higher_is_better = True
    source = "Edin et al.'s normalised AOPC"
    caption = ("Normalised AOPC: AOPC between the worst (0) and the best (1) ordering of the words a beam search "
               "found (Edin et al.).")
    column = "normalised aopc"
    paired = False  # only where the bounds were searched; compared by AOPC
    interval_shown = True
    null_written = True

    def values(self, evidence: Evidence) -> np.ndarray | None:
        """None where no search was made, or where every ordering has one AOPC (nothing to normalise by)."""
        if evidence.aopc_range is None or evidence.aopc_range[1] <= evidence.aopc_range[0]:
            return None
        return np.array([normalised_aopc(value, *evidence.aopc_range) for value in AOPC().values(evidence)])
