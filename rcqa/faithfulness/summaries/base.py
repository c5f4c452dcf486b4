"""The interface every faithfulness summary shares (as a layer-wise method is one class on
rcqa.attribution.layerwise.base): its name in the files, its label on the pages, its direction, where it comes from,
and how one compared entry's value of it is computed, draw by draw, from the evidence a comparison gathered (the
deletion curve, ERASER's deleted and kept bins, AOPC's bounds) or from re-answers of its own. A subclass that names
itself registers itself; the package's __init__ imports each summary's module, which is its registry line.

The document, the paired comparisons, the dataset's records and summaries, the figures, the CLI's print-out and the
Methods page's caption read SUMMARIES, in its order (the order the JSON has always held its keys in)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from rcqa.attribution.methods.base import Case
from rcqa.types import Word


@dataclass(frozen=True)
class Evidence:
    """What one compared entry's summaries are computed from, each array over its draws (first axis): the explained
    span's probability p with nothing deleted, with the top k = 0 … K words deleted, with the top words of each
    ERASER bin deleted and with only them kept; what summaries with re-answers of their own re-answered (by name);
    and AOPC's range over every ordering (None where no search was made)."""

    original: float
    curve: np.ndarray  # draws × k
    without_top: np.ndarray  # draws × bins
    only_top: np.ndarray  # draws × bins
    reanswered: Mapping[str, np.ndarray] = field(default_factory=dict)  # summary name -> draws × its variants
    aopc_range: tuple[float, float] | None = None


SUMMARIES: dict[str, FaithfulnessSummary] = {}  # name -> the summary, in the order the package registers them


class FaithfulnessSummary(ABC):
    """One number per compared entry and draw saying how faithful its word ranking is."""

    name: ClassVar[str]  # the key the documents, rows and summaries hold it under
    label: ClassVar[str]  # as the tables, the CLI and the verdicts name it
    higher_is_better: ClassVar[bool]
    source: ClassVar[str]  # whose measure it is, as the report's prose cites it: "ERASER's comprehensiveness"
    caption: ClassVar[str]  # one sentence for the Methods page: what it measures and which way is better
    column: ClassVar[str]  # the dataset table's column of its mean
    paired: ClassVar[bool] = True  # compared pair by pair (rcqa.faithfulness.paired)
    interval_shown: ClassVar[bool] = False  # the dataset table shows its 95 % interval beside the mean
    null_written: ClassVar[bool] = False  # a document writes null where it is not computed (files always held it)
    variants: ClassVar[int] = 0  # re-answers of its own per ranking (the cost model counts them)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a summary, not an intermediate base
            SUMMARIES[cls.name] = cls()

    @abstractmethod
    def values(self, evidence: Evidence) -> np.ndarray | None:
        """Its value per draw; None where this evidence cannot give it (its re-answers were not made, no bounds)."""

    def reanswer(self, case: Case, words: Sequence[Word], deletable: Sequence[int],
                 word_scores: Sequence[np.ndarray]) -> list[np.ndarray] | None:
        """The explained span's probability in re-answers of its own, `variants` per ranking (given by its passage-word
        scores, over `words`, of which `deletable` may be perturbed); None for a summary read from the deletions."""
        return None

