"""What a page draws of an explanation, built once per result and view and kept for every session that shows it.

Building a result's figures, tables and sentences costs the server 1-2 s of its one interpreter a page (Plotly
validating every property and copying its template, pandas grouping the words): eight explanations landing at once
kept a new visitor's first page waiting behind them (issue 46; docs/serving.md: Where a new visitor's time goes). So
the worker process that computed the result also builds what its page shows first (the heatmap tab: heatmap_tab) and
hands it over with the result; the other tabs build theirs when they are opened; and whatever is built is kept here
per result and example shown, charts as their Plotly JSON (rcqa.figures.stored), for any session showing the same
result, the most recently used first, within KEPT_MB for the process and SESSION_KEPT_MB for each session (the
result it shows now included). No streamlit: the worker processes use this too."""
from __future__ import annotations

import dataclasses
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rcqa.figures import Chart, whole_input
from rcqa.figures import heatmap as heatmap_chart
from rcqa.figures.stored import FigureJSON, stored
from rcqa.types import Aggregation, Attribution, Example

KEPT_MB = 256  # what the kept results' charts may hold together (a whole passage's heatmap can be tens of MB)
SESSION_KEPT_MB = 64  # what one session's results' views may hold, the current one's counted: a quarter of KEPT_MB


def shown_as(example: Example) -> tuple:
    """What a result's views show of its example beyond the result cache's key (model, text, settings): its id, title
    and gold answers name the charts and their downloads, so views are kept per result key and this."""
    return example.id, example.title, example.answers, example.is_impossible


def seen_by(value: Any, example: Example) -> Any:
    """`value` as `example`'s: a job joined from another session's identical request (the same model, text and
    settings) holds that session's example wherever it keeps one, and the example's id names the charts and downloads
    drawn from it. Examples of another text (a contrast's, say) are left as they are; so is what holds none."""
    if isinstance(value, Example):
        same_text = (value.passage, value.question) == (example.passage, example.question)
        return example if same_text and value != example else value
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        parts = tuple(seen_by(part, example) for part in value)
        return value if all(seen is part for seen, part in zip(parts, value)) else parts
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [field.name for field in dataclasses.fields(value) if field.init]
        changed = {name: seen for name in fields
                   if (seen := seen_by(getattr(value, name), example)) is not getattr(value, name)}
        return dataclasses.replace(value, **changed) if changed else value
    return value


class ResultCharts:
    """One result's built views: each value build(result, *args, **options) returned, by build and arguments, a
    Chart kept with its figure as JSON, the most recently used last. `builds` counts the calls of each build (named
    by module and name) made in this process; `held` is the bytes the views hold, roughly (their JSON, tables and
    text), counted as each is kept; past `limit` bytes the least recently used views are dropped (the one just kept
    stays). `example`: shown_as of the example the views were drawn for, where they were drawn elsewhere (a worker
    process), so that they are kept only for that example."""

    def __init__(self, limit: float = math.inf, example: tuple | None = None) -> None:
        self._built: OrderedDict[tuple, Any] = OrderedDict()
        self._sizes: dict[tuple, int] = {}
        self._lock = threading.Lock()
        self.builds: Counter[str] = Counter()
        self.held, self.limit, self.example = 0, limit, example

    def get(self, build: Callable[..., Any], result: Attribution, *args: Any, **options: Any) -> Any:
        """build(result, *args, **options), built on the first ask (arguments hashable: the view's choices)."""
        return self.value((_name(build), args, tuple(sorted(options.items()))),
                          lambda: build(result, *args, **options))

    def value(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """What compute() returns, kept under `key` (its first item names what it is, for `builds`)."""
        with self._lock:
            if key in self._built:
                self._built.move_to_end(key)
                return self._built[key]
        found = compute()
        found = stored(found) if isinstance(found, Chart) else found
        with self._lock:
            self.builds[key[0]] += 1
            return self._keep(key, found)

    def _keep(self, key: tuple, value: Any) -> Any:
        if key not in self._built:  # else a session built it meanwhile, and has that one
            self._built[key], self._sizes[key] = value, _size(value)
            self.held += self._sizes[key]
            while self.held > self.limit and len(self._built) > 1:
                dropped = next(iter(self._built))
                del self._built[dropped]
                self.held -= self._sizes.pop(dropped)
        self._built.move_to_end(key)
        return self._built[key]

    def update(self, other: ResultCharts) -> None:
        """Keep what `other` built of the same result too (what its worker process built)."""
        with self._lock:
            for key, value in other._built.items():
                self._keep(key, value)

    def __getstate__(self) -> dict:  # pickled to cross from a worker process: the views, not the lock; `builds`
        return {"built": self._built, "example": self.example}  # counts this process's own

    def __setstate__(self, state: dict) -> None:
        self.__init__(example=state["example"])  # type: ignore[misc]
        for key, value in state["built"].items():
            self._keep(key, value)


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


class _Store:
    """The views kept in this process: per result key and example shown (an entry), the most recently used last,
    within KEPT_MB together; and per session, the entries it used, the most recently used last, within
    SESSION_KEPT_MB. A session past its share drops its own least recently used entries (those no other session
    uses are dropped), so one visitor cycling through results or views evicts only its own; past KEPT_MB, the least
    recently used of all go. The entry just asked for stays whatever its size, its own views bounded by
    SESSION_KEPT_MB (ResultCharts.limit)."""

    def __init__(self) -> None:
        self.entries: OrderedDict[tuple, ResultCharts] = OrderedDict()
        self.sessions: dict[str, OrderedDict[tuple, None]] = {}
        self.lock = threading.Lock()

    def use(self, entry: tuple, session: str) -> ResultCharts:
        with self.lock:
            if entry not in self.entries:
                self.entries[entry] = ResultCharts(limit=SESSION_KEPT_MB * 2**20)
            self.entries.move_to_end(entry)
            used = self.sessions.setdefault(session, OrderedDict())
            used[entry] = None
            used.move_to_end(entry)
            self._within_share(session)
            self._within_process()
            return self.entries[entry]

    def _within_share(self, session: str) -> None:
        """The session's entries within its share, the one it uses now (its last) kept."""
        used = self.sessions[session]
        total = sum(self.entries[entry].held for entry in used)
        for entry in list(used)[:-1]:
            if total <= SESSION_KEPT_MB * 2**20:
                break
            total -= self.entries[entry].held
            del used[entry]
            if not any(entry in others for others in self.sessions.values()):
                del self.entries[entry]

    def _within_process(self) -> None:
        """Every entry within KEPT_MB, the one used now (the last) kept."""
        total = sum(kept.held for kept in self.entries.values())
        for entry in list(self.entries)[:-1]:
            if total <= KEPT_MB * 2**20:
                break
            total -= self.entries.pop(entry).held
            for session, used in list(self.sessions.items()):
                used.pop(entry, None)
                if not used:
                    del self.sessions[session]


_store = _Store()


def charts_of(key: str, example: Example, session: str) -> ResultCharts:
    """The views kept for the result under `key` (the result cache's key) shown as `example` (shown_as), an empty
    set where none are, used by `session` now (the store's bounds: _Store)."""
    return _store.use((key, shown_as(example)), session)


def kept_for(key: str, example: Example) -> ResultCharts | None:
    """The views kept for the result under `key` shown as `example`, if any, used by no session for it (a test's
    look)."""
    with _store.lock:
        return _store.entries.get((key, shown_as(example)))


def keep(key: str, example: Example, charts: ResultCharts, session: str) -> None:
    """Keep `charts` (built elsewhere: in the worker process) with those of the result under `key` shown as
    `example`, where they were drawn for that example (a session that joined another's job, its example another
    id, builds its own instead of showing the other's name)."""
    if charts.example in (None, shown_as(example)):
        current = charts_of(key, example, session)
        current.update(charts)
        charts_of(key, example, session)  # what it added counts against the bounds now


def forget() -> None:
    """Drop every result's kept views (for tests: the store is one per process)."""
    with _store.lock:
        _store.entries.clear()
        _store.sessions.clear()


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
        """The result's heatmap tab at these choices, built into a new set of views for the result's example."""
        charts = ResultCharts(example=shown_as(result.example))
        special = result.targets[0].explains_null if self.special_tokens is None else self.special_tokens
        heatmap_tab(charts, result, self.aggregation, self.include_question, special)
        return charts


def heatmap_tab(charts: ResultCharts, result: Attribution, aggregation: Aggregation, include_question: bool,
                include_special: bool, focus_char: int | None = None) -> HeatmapTab:
    """The heatmap tab at these choices, from `charts` (built there on the first ask); `focus_char`: a passage
    character the heatmap opens around instead of the explained span (rcqa.figures.heatmap)."""
    focus = {} if focus_char is None else {"focus_char": focus_char}  # the worker's tab is kept without one
    heatmap = charts.get(heatmap_chart, result, aggregation, include_question=include_question,
                         include_special=include_special, **focus)
    overview = (charts.get(whole_input.passage_overview, result, aggregation=aggregation)
                if whole_input.needs_overview(int(heatmap.data.position.max()) + 1) else None)
    apart = charts.get(whole_input.start_end, result, aggregation, with_sum=False)
    reading = None if apart is None else charts.value(("start_end_reading", aggregation),
                                                      lambda: whole_input.start_end_reading(apart.data))
    return HeatmapTab(overview, heatmap, apart, reading)
