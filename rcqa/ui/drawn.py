"""What a page draws of an explanation, built once per result and view and kept for every session that shows it.

Building a result's figures, tables and sentences costs the server 1-2 s of its one interpreter a page (Plotly
validating every property and copying its template, pandas grouping the words): eight explanations landing at once
kept a new visitor's first page waiting behind them (issue 46; docs/serving.md: Where a new visitor's time goes). So
the worker process that computed the result also builds what its page shows first (the heatmap tab: heatmap_tab) and
hands it over with the result; the other tabs build theirs when they are opened; and whatever is built is kept here
per result, charts as their Plotly JSON (rcqa.figures.stored), for any session showing the same result, the most
recently used results first, within KEPT_MB. No streamlit: the worker processes use this too."""
from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rcqa.figures import Chart, whole_input
from rcqa.figures import heatmap as heatmap_chart
from rcqa.figures.stored import FigureJSON, stored
from rcqa.types import Aggregation, Attribution

KEPT_MB = 256  # what the kept results' charts may hold together (a whole passage's heatmap can be tens of MB)


class ResultCharts:
    """One result's built views: each value build(result, *args, **options) returned, by build and arguments, a
    Chart kept with its figure as JSON. `builds` counts the calls of each build (named by module and name) made in
    this process; `held` is the bytes the views hold, roughly (their JSON, tables and text), counted as each is
    kept."""

    def __init__(self) -> None:
        self._built: dict[tuple, Any] = {}
        self._lock = threading.Lock()
        self.builds: Counter[str] = Counter()
        self.held = 0

    def get(self, build: Callable[..., Any], result: Attribution, *args: Any, **options: Any) -> Any:
        """build(result, *args, **options), built on the first ask (arguments hashable: the view's choices)."""
        return self.value((_name(build), args, tuple(sorted(options.items()))),
                          lambda: build(result, *args, **options))

    def value(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """What compute() returns, kept under `key` (its first item names what it is, for `builds`)."""
        with self._lock:
            if key in self._built:
                return self._built[key]
        found = compute()
        found = stored(found) if isinstance(found, Chart) else found
        with self._lock:
            self.builds[key[0]] += 1
            return self._keep(key, found)

    def _keep(self, key: tuple, value: Any) -> Any:
        if key not in self._built:  # else a session built it meanwhile, and has that one
            self._built[key] = value
            self.held += _size(value)
        return self._built[key]

    def update(self, other: ResultCharts) -> None:
        """Keep what `other` built of the same result too (what its worker process built)."""
        with self._lock:
            for key, value in other._built.items():
                self._keep(key, value)

    def __getstate__(self) -> dict:  # pickled to cross from a worker process: the views, not the lock; `builds`
        return {"built": self._built, "held": self.held}  # counts this process's own

    def __setstate__(self, state: dict) -> None:
        self.__init__()  # type: ignore[misc]
        self._built, self.held = state["built"], state["held"]


def _name(build: Callable[..., Any]) -> str:
    return f"{build.__module__}.{build.__qualname__}"


def _size(value: Any) -> int:
    if isinstance(value, Chart):
        figures = sum(len(figure.spec) for figure in (value.figure, value.export) if isinstance(figure, FigureJSON))
        return figures + len(value.html or "") + int(value.data.memory_usage(deep=True).sum())
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(deep=True).sum())
    if isinstance(value, (list, tuple)):
        return sum(_size(item) for item in value)
    return len(value) if isinstance(value, str) else 64


_kept: OrderedDict[str, ResultCharts] = OrderedDict()  # by result key, the most recently used last
_kept_lock = threading.Lock()


def charts_of(key: str) -> ResultCharts:
    """The views kept for the result under `key` (the result cache's key), an empty set where none are; the least
    recently used results past KEPT_MB are dropped (this one stays)."""
    with _kept_lock:
        if key not in _kept:
            _kept[key] = ResultCharts()
        _kept.move_to_end(key)
        total = sum(kept.held for kept in _kept.values())
        for name in list(_kept)[:-1]:
            if total <= KEPT_MB * 2**20:
                break
            total -= _kept.pop(name).held
        return _kept[key]


def keep(key: str, charts: ResultCharts) -> None:
    """Keep `charts` (built elsewhere: in the worker process) with those of the result under `key`."""
    charts_of(key).update(charts)
    charts_of(key)  # what it added counts against KEPT_MB now


def forget() -> None:
    """Drop every result's kept views (for tests: the store is one per process)."""
    with _kept_lock:
        _kept.clear()


@dataclass(frozen=True)
class HeatmapTab:
    """What Explore's first tab draws: a long passage's overview, the heatmap, and the start and end logits apart
    with their reading where the result holds both."""

    overview: Chart | None
    heatmap: Chart
    apart: Chart | None
    apart_reading: str | None


@dataclass(frozen=True)
class HeatmapView:
    """The heatmap tab's choices as a page had them when it asked for the explanation: what the worker process draws
    with the result."""

    aggregation: Aggregation
    include_question: bool
    special_tokens: bool | None  # None: shown where the target explains "no answer" (rcqa.ui.view.View's rule)

    def draw(self, result: Attribution) -> ResultCharts:
        """The result's heatmap tab at these choices, built into a new set of views."""
        charts = ResultCharts()
        special = result.targets[0].explains_null if self.special_tokens is None else self.special_tokens
        heatmap_tab(charts, result, self.aggregation, self.include_question, special)
        return charts


def heatmap_tab(charts: ResultCharts, result: Attribution, aggregation: Aggregation, include_question: bool,
                include_special: bool) -> HeatmapTab:
    """The heatmap tab at these choices, from `charts` (built there on the first ask)."""
    heatmap = charts.get(heatmap_chart, result, aggregation, include_question=include_question,
                         include_special=include_special)
    overview = (charts.get(whole_input.passage_overview, result, aggregation=aggregation)
                if whole_input.needs_overview(int(heatmap.data.position.max()) + 1) else None)
    apart = charts.get(whole_input.start_end, result, aggregation, with_sum=False)
    reading = None if apart is None else charts.value(("start_end_reading", aggregation),
                                                      lambda: whole_input.start_end_reading(apart.data))
    return HeatmapTab(overview, heatmap, apart, reading)
