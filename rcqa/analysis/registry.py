"""An analysis of one explanation as one unit: its entry says what it computes and how its typed result is kept
(to_dict / from_dict, its dataset columns); the layers above fill in the rest by the analysis' name — its figure
(rcqa.figures, which sits above the analyses) and its command-line options (rcqa.cli) — so that nothing imports up.

The readers (the `analyze` verb, `reproduce`'s rows, rcqa.analyze, the dashboard's worker and pages) go through
rcqa.analysis.registered.ANALYSES only: an analysis added there is on every front (docs/architecture.md)."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, Protocol

import numpy as np

from rcqa.analysis.words import passage_distribution
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution
from rcqa.types.settings import DEFAULT_METHOD

# a dataset column's kind, which rcqa.dataset.rows turns into its Parquet type: one number per layer, a layers ×
# layers matrix, a JSON document (an analysis a run adds on request), or a record of numbers named by the tuple
ColumnKind = Literal["per_layer", "matrix", "json"] | tuple[str, ...]


@dataclass(frozen=True)
class Inputs:
    """What an analysis reads: the explanation (made by `method`), the token score and k of the word rankings, the
    target explained, and, for an analysis that compares two methods, the same question explained by its companion
    method (Analysis.companion)."""

    result: Attribution
    aggregation: Aggregation = DEFAULT_AGGREGATION
    k: int = 5
    target: int = 0
    method: str = DEFAULT_METHOD
    companion: Attribution | None = None

    @cached_property
    def distribution(self) -> np.ndarray:
        """(layers × passage words): each layer's passage-word distribution, read by most analyses, computed once."""
        return passage_distribution(self.result, self.aggregation, self.target)


class AnalysisResult(Protocol):
    """An analysis' typed result: a JSON document and back, and its cells of one dataset row."""

    def to_dict(self) -> dict: ...

    @classmethod
    def from_dict(cls, document: dict) -> AnalysisResult: ...

    def row(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Analysis:
    """One registered analysis. `columns` are the dataset row's cells its result's `row()` fills, in order; an
    `optional` analysis is computed only when asked for (`reproduce --NAME`, a button on a page), the others on
    every explanation."""

    name: str
    title: str  # a page's heading of its section
    summary: str  # one line: for --help, the README's table and the page
    compute: Callable[..., AnalysisResult]  # (Inputs, **its CLI options) -> its result
    result_type: type[AnalysisResult]
    columns: dict[str, ColumnKind]
    optional: bool = False
    # for an analysis of two methods: the companion's method for each method of the explanation it is given
    companion: dict[str, str] | None = None

    def __post_init__(self):
        # reproduce's added analyses are each one JSON column named after them (rcqa.dataset.extras.EXTRAS, which
        # the dataset aggregates read as optional columns by those names)
        if self.optional and self.columns != {self.name: "json"}:
            raise ValueError(f"the optional analysis {self.name!r} fills one JSON column named after it")

    def companion_of(self, method: str) -> str | None:
        """The method of the second explanation this analysis needs beside one made by `method` (None: none)."""
        if self.companion is None:
            return None
        if method not in self.companion:
            raise ValueError(f"the {self.name} analysis reads explanations made by {' or '.join(self.companion)}, "
                             f"not {method}")
        return self.companion[method]

    def run(self, inputs: Inputs, **options) -> AnalysisResult:
        if (needed := self.companion_of(inputs.method)) is not None and inputs.companion is None:
            raise ValueError(f"the {self.name} analysis compares with an {needed} explanation of the same question; "
                             "explain it too")
        return self.compute(inputs, **options)

    def load(self, document: dict) -> AnalysisResult:
        return self.result_type.from_dict(document)


@dataclass(frozen=True)
class CliOptions:
    """An analysis' own options of the `analyze` verb: `add` puts them on its parser, `read` turns the parsed
    arguments into the keywords its compute takes."""

    add: Callable[[argparse.ArgumentParser], object]  # what it returns (an argparse Action, say) is not read
    read: Callable[[argparse.Namespace], dict]


# filled by the layers above, by an analysis' name, when they are imported
_FIGURES: dict[str, Callable[..., Any]] = {}
_OPTIONS: dict[str, CliOptions] = {}
NO_OPTIONS = CliOptions(lambda parser: None, lambda args: {})


def register_figure(name: str) -> Callable[[Callable], Callable]:
    """Decorate `figure(found, inputs) -> Chart` as the figure of the analysis `name` (from rcqa.figures)."""
    def register(figure: Callable) -> Callable:
        _FIGURES[name] = figure
        return figure
    return register


def register_options(name: str, options: CliOptions) -> None:
    """The `analyze NAME` verb's own options of the analysis `name` (from rcqa.cli)."""
    _OPTIONS[name] = options


def figure_of(name: str) -> Callable[..., Any]:
    """The analysis' figure; rcqa.figures registers them when it is imported."""
    if name not in _FIGURES:
        raise LookupError(f"the {name} analysis has no figure registered; import rcqa.figures first")
    return _FIGURES[name]


def options_of(name: str) -> CliOptions:
    """The analysis' own command-line options (none unless rcqa.cli registered some)."""
    return _OPTIONS.get(name, NO_OPTIONS)


def json_list(values: np.ndarray, decimals: int) -> list:
    """An array as nested lists, NaN (undefined) as None, which JSON writes as null."""
    rounded = np.round(np.asarray(values, dtype=float), decimals)
    return np.where(np.isnan(rounded), np.array(None, dtype=object), rounded).tolist()
