"""Every registered analysis of one explanation (rcqa.analysis.registry), in the order of their dataset columns: the
list the fronts read. An analysis is added here and nowhere else in the library."""
from __future__ import annotations

from rcqa.analysis.agreement import agreement_analysis
from rcqa.analysis.plausibility import PLAUSIBILITY
from rcqa.analysis.pos import POS
from rcqa.analysis.registry import Analysis
from rcqa.analysis.roles.result import ROLES
from rcqa.analysis.similarity import SIMILARITY

# the two layer-wise methods the agreement compares, by name and label (rcqa.attribution.layerwise's registry, which
# this layer sits beside and cannot import): the path method against the one-pass relevance
AGREEMENT = agreement_analysis(("integrated_gradients", "Integrated Gradients"), ("attnlrp", "AttnLRP"))
ANALYSES: dict[str, Analysis] = {analysis.name: analysis for analysis in (ROLES, POS, SIMILARITY, PLAUSIBILITY, AGREEMENT)}
ALWAYS = tuple(name for name, analysis in ANALYSES.items() if not analysis.optional)  # on every explanation
OPTIONAL = tuple(name for name, analysis in ANALYSES.items() if analysis.optional)  # on request


def analysis(name: str) -> Analysis:
    """The analysis called `name`, or a ValueError that lists them."""
    if name not in ANALYSES:
        raise ValueError(f"unknown analysis {name!r}; choose one of {', '.join(ANALYSES)}")
    return ANALYSES[name]
