"""The Dataset page's bridge: which runs it can show (without reading their rows), its choice of run and filter as a
link and back, their summaries under a filter (cached per run state), and opening one of a run's examples in Explore
with the run's own explanation, never recomputed.

Runs are found through $RCQA_RUNS only (os.pathsep-separated: run folders, or folders holding run folders), so an
installed rcqa never reads a checkout: set RCQA_RUNS=reports/runs to see the committed runs. From a checkout,
`streamlit run app.py` points it at the checkout's reports/runs unless it is set.
"""
from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import streamlit as st

from rcqa.attribution.cache import ResultCache
from rcqa.data import load_examples
from rcqa.dataset import store
from rcqa.dataset.aggregate import Run, by_abstention, has_abstentions, load_run, select, summarize
from rcqa.dataset.kept_summary import kept_summary
from rcqa.dataset.rows import QUESTION_TYPES
from rcqa.dataset.sentence_roles import NEEDS_RUN, NONE_READ, NOT_KEPT, UNDER_FILTER
from rcqa.dataset.store import RUNS_ENV, run_folders
from rcqa.dataset.summary import DatasetSummary
from rcqa.resources import ResourceError, squad_file
from rcqa.text import quoted
from rcqa.types import Example
from rcqa.ui import examples, inputs, view
from rcqa.ui.results import explanations
from rcqa.ui.run_cache import from_run

EXAMPLE_COLUMNS = ["id", "question_type", "question", "prediction", "gold_answers", "em", "f1", "probability"]


@dataclasses.dataclass(frozen=True)
class Filter:
    """The Dataset page's filter: its widgets' choices, so one of LEGAL_FILTERS (anything else is refused)."""

    question_type: str | None = None
    correct: bool | None = None
    quantifier: bool | None = None
    abstained: bool | None = None

    def __post_init__(self):
        if self.question_type not in (None, *QUESTION_TYPES) or not all(
                choice in (None, True, False) for choice in (self.correct, self.quantifier, self.abstained)):
            raise ValueError(f"no such filter of a run's questions: {self!r}")

    def apply(self, rows: pa.Table) -> pa.Table:
        return select(rows, self.question_type, self.correct, self.quantifier, self.abstained)


LEGAL_FILTERS = (len(QUESTION_TYPES) + 1) * 3 ** 3  # any or one type; any, yes or no for the three others: 297


@dataclasses.dataclass(frozen=True)
class Listed:
    """A run as the Dataset page lists it, from its manifest and its shards' footers: none of its rows is read (the
    1,000-question runs take seconds each, and the page read every run before it drew one)."""

    folder: Path
    name: str  # Run.name: the folder and the preset
    model: str
    questions: int  # the rows of its readable shards: the questions it scored


def listed_runs() -> tuple[list[Listed], list[str]]:
    """The runs under $RCQA_RUNS that can be shown, and the names of those that cannot (a manifest that is not
    JSON, or lacks the model it names): one broken run leaves the others on the page."""
    readable, unreadable = [], []
    for folder in run_folders():
        try:
            readable.append(from_run(folder, "listed", lambda: _listed(folder)))
        except (OSError, ValueError):
            unreadable.append(folder.name)
    return readable, unreadable


def _listed(folder: Path) -> Listed:
    manifest = store.read_manifest(folder)
    questions = 0
    for shard in (folder / store.SHARDS).glob("*.parquet"):
        try:
            questions += pq.read_metadata(shard).num_rows
        except (OSError, pa.ArrowException):  # skipped, as load_run skips it
            continue
    named = Run(folder, manifest, pa.Table.from_pydict({}))  # a Run names itself from its manifest alone
    return Listed(folder, named.name, manifest.model.name, questions)


def largest(listed: list[Listed]) -> Listed:
    """The run that scored the most questions (the first of those that tie): a link naming none opens on it."""
    return max(listed, key=lambda found: found.questions)


@dataclasses.dataclass(frozen=True)
class Choice:
    """What the Dataset page shows: a run, another to compare it with, and the filter's fields."""

    run: Path
    compare: Path | None = None
    question_type: str | None = None
    correct: bool | None = None
    quantifier: bool | None = None
    abstained: bool | None = None

    @property
    def filter(self) -> Filter:
        return Filter(self.question_type, self.correct, self.quantifier, self.abstained)


_RUN, _COMPARE = "ds", "dsvs"  # apart from the View's parameters (rcqa.ui.view.url), which other pages write
# the filter in a link: parameter → (Choice field, its words → values); a field at "any" stays out of the link
_FILTER_LINK: dict[str, tuple[str, dict[str, Any]]] = {
    "dstype": ("question_type", {kind: kind for kind in QUESTION_TYPES}),
    "dsem": ("correct", {"right": True, "wrong": False}),
    "dsquant": ("quantifier", {"quantifier": True, "other": False}),
    "dsnull": ("abstained", {"answered": False, "abstained": True}),
}


def to_link(choice: Choice) -> dict[str, str]:
    """The choice as URL parameters: runs by their folder's name (never a path)."""
    query = {_RUN: choice.run.name, **({_COMPARE: choice.compare.name} if choice.compare else {})}
    for name, (field, words) in _FILTER_LINK.items():
        if (value := getattr(choice, field)) is not None:
            query[name] = next(word for word, meant in words.items() if meant == value)
    return query


def from_link(query: Mapping[str, str], listed: list[Listed]) -> tuple[Choice, list[str]]:
    """The choice a link makes among the listed runs (at least one), and a sentence for each of its values that
    could not be used: a run this server lacks opens the largest one, a bad filter value is left at "any"."""
    folders: dict[str, Path] = {}
    for found in listed:  # two roots may hold runs of one name: a link opens the first
        folders.setdefault(found.folder.name, found.folder)
    problems = []
    run = folders.get(query.get(_RUN, ""))
    if run is None:
        run = largest(listed).folder
        if _RUN in query:
            problems.append(f"This link names a run {quoted(query[_RUN])} that this server does not have, so the "
                            f"largest, {run.name}, is shown.")
    compare = folders.get(query.get(_COMPARE, ""))
    if _COMPARE in query and compare in (None, run):
        problems.append(f"Ignored {_COMPARE}={quoted(query[_COMPARE])} from the link: it names no other run here.")
        compare = None
    fields = {}
    for name, (field, words) in _FILTER_LINK.items():
        if name not in query:
            continue
        if query[name] in words:
            fields[field] = words[query[name]]
        else:
            problems.append(f"Ignored {name}={quoted(query[name])} from the link: choose one of {', '.join(words)}.")
    return Choice(run, compare, **fields), problems


def run(folder: Path) -> Run:
    return from_run(folder, "run", lambda: load_run(str(folder)))


def _computed(folder: Path, what: str, chosen: Filter | None, compute: Callable[[Run], Any],
              spinner: str | None = None) -> Any:
    """compute(run) for the run as it is now, kept with it under (what, chosen) (rcqa.ui.run_cache); a copy, so that a
    page that changes it changes no other page's."""
    return copy.deepcopy(from_run(folder, (what, chosen), lambda: compute(run(folder)), spinner))


def _summary_of(found: Run, chosen: Filter) -> DatasetSummary | None:
    if chosen == Filter() and (kept := kept_summary(found.folder)) is not None:
        return kept
    rows = chosen.apply(found.rows)
    return summarize(found, rows) if rows.num_rows else None


def _methods_summary(folder: Path) -> dict | None:
    from rcqa.dataset.faithfulness import summarize_faithfulness

    return _computed(folder, "methods", None, lambda found: summarize_faithfulness(found.rows))


def methods_verdicts(fingerprint: str, operator: str, spare_answer: bool) -> list[tuple[str, dict]]:
    """(run name, its methods' summary) of every readable run that compared the methods on this model under this
    deletion protocol: the paired verdict over its questions, which one question cannot give."""
    found = []
    for folder in run_folders():
        try:  # the manifest alone decides; only a matching run's rows are read
            manifest = store.read_manifest(folder)
        except (OSError, ValueError):
            continue
        analysis = manifest.analysis
        if (manifest.model.fingerprint != fingerprint or "faithfulness" not in analysis.extras
                or (analysis.operator or "pad") != operator  # runs before the operator was recorded used pad
                or bool(analysis.spare_answer) != spare_answer):
            continue
        if (summary_found := _methods_summary(folder)) is not None:
            found.append((folder.name, summary_found))
    return found


def summary(folder: Path, chosen: Filter) -> DatasetSummary | None:
    """The run's summary over the chosen rows; None when no row is chosen."""
    return _computed(folder, "summary", chosen, lambda found: _summary_of(found, chosen))


def why_no_sentences(folder: Path, chosen: Filter) -> str:
    """Why the run's summary over the chosen rows has no sentence section, in one sentence: none of rows that keep
    sentence scores could be read; an older run's rows keep no passage to read their word shares in; its kept summary,
    which alone reads them, is not today's or has none; or a filter is set, under which they are not read."""
    rows = chosen.apply(run(folder).rows)
    if "sentence_share" in rows.column_names and rows["sentence_share"].null_count < rows.num_rows:
        return NONE_READ
    if "passage" not in rows.column_names or rows["passage"].null_count == rows.num_rows:
        return NEEDS_RUN
    kept = _computed(folder, "kept", None, lambda found: kept_summary(found.folder))
    if kept is None:
        return NOT_KEPT
    return NEEDS_RUN if kept.sentences is None else UNDER_FILTER


def abstains(folder: Path) -> bool:
    """Whether the run's model abstained on any of its questions."""
    return has_abstentions(run(folder).rows)


def abstention_parts(folder: Path, chosen: Filter) -> dict[str, DatasetSummary]:
    """The summaries of the chosen rows' answered and abstained questions (empty where the model never abstained)."""
    return _computed(folder, "abstention", chosen, lambda found: by_abstention(found, chosen.apply(found.rows)),
                     "Averaging over the answered and the abstained questions…")


def examples_table(folder: Path, chosen: Filter):
    return chosen.apply(run(folder).rows).select(EXAMPLE_COLUMNS).to_pandas()


# no count bound, which a page cycling through more runs' files would miss on: the data files the runs under $RCQA_RUNS
# name bound it, and runs sharing one (SQuAD dev) share its questions
@st.cache_resource(show_spinner="Reading the run's questions…")
def _examples(path: str) -> list[Example]:
    return load_examples(path)


def data_file(found: Run) -> Path:
    """The run's data file on this machine: SQuAD v1.1 dev from rcqa's cache, else the path the run read."""
    data = found.manifest.data
    return squad_file("dev") if data.source == "squad-dev" else Path(data.path)


def open_in_explore(found: Run, example_id: str) -> str | None:
    """Point Explore at one of the run's examples with the run's settings and, when the run kept it and the
    loaded model is the run's, the run's own explanation. Returns what went wrong, else None. The run's rows carry
    their examples; a run made before they did reads its data file. Nothing is downloaded: a missing SQuAD names
    the command that fetches it."""
    carried = examples.run_questions(found.folder.name)
    example = next((e for e in carried[1] if e.id == example_id), None) if carried else None
    run_name = found.folder.name if example else ""
    if example is None:  # rows made before they carried their examples: the data file's
        offered = _offer_data_file(found)
        if isinstance(offered, str):
            return offered
        example = next((e for e in offered if e.id == example_id), None)
        if example is None:
            return f"The run's data file holds no question {example_id!r}: it changed since the run."
    analysis = found.manifest.analysis
    settings, _ = analysis.explained_with()
    view.update(model=found.manifest.model.name, source="upload", run=run_name, example_id=example.id,
                question=example.question, aggregation=analysis.aggregation, top_k=analysis.top_k,
                **view.view_fields(settings))
    view.target_chosen()  # the run's target, kept even where its model abstained
    fingerprint = found.manifest.model.fingerprint
    result = store.results(found.folder, read_only=True).result_for(example, ResultCache.key(fingerprint, example, settings))
    qa_model = inputs.model()
    if result is not None and qa_model is not None and qa_model.fingerprint == fingerprint:
        explanations.keep_result(explanations.result_key(qa_model, example, view.view().settings()), result)
    return None


def _offer_data_file(found: Run) -> list[Example] | str:
    """The questions of the run's data file, offered as an uploaded file's; or what went wrong."""
    try:
        path = data_file(found)
    except ResourceError:
        return ("This run was made before its rows carried their passages, and SQuAD v1.1 dev is not on this "
                "machine; the operator can fetch it with `python -m rcqa data fetch`.")
    if not path.is_file():
        return f"The run's data file {path.name} is not on this machine, so its passages cannot be shown."
    questions = _examples(str(path))
    examples.offer_questions(f"{path.name} (run {found.folder.name})", questions)
    return questions
