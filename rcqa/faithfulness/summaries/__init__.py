"""The faithfulness summaries, each one class in a module on base.FaithfulnessSummary, which registers it by name:
the document, the paired comparisons, the dataset's summary, the figures, the CLI and the Methods page read
SUMMARIES. Each import below is a summary's registry line (docs/methods.md: a faithfulness summary is one class)."""
from rcqa.faithfulness.summaries.base import SUMMARIES, Evidence, FaithfulnessSummary
from rcqa.faithfulness.summaries.eraser import Comprehensiveness, Sufficiency
from rcqa.faithfulness.summaries.aopc import AOPC, NormalisedAOPC
from rcqa.faithfulness.summaries.soft import SoftComprehensiveness, SoftSufficiency

__all__ = ["AOPC", "SUMMARIES", "Comprehensiveness", "Evidence", "FaithfulnessSummary", "NormalisedAOPC",
           "SoftComprehensiveness", "SoftSufficiency", "Sufficiency"]
