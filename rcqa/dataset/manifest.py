"""A run's manifest.json, typed: the model, the analysis and the data that decide whether a folder's rows can be
resumed, and the bookkeeping the runner rewrites after every chunk (counts, failed and skipped examples, one
session per invocation). to_dict writes the JSON manifests have always held, key for key, so every run written
before loads and saves back equal; a field a run's version did not write yet is left out again."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rcqa.types import Aggregation
from rcqa.types.document import Document
from rcqa.types.settings import ExplainSettings, Windowing, split_recorded_settings


def _without_none(data: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in data.items() if value is not None}


@dataclass(frozen=True)
class RunModel:
    name: str  # as `reproduce --model` named it: the workers load it by this name
    fingerprint: str


@dataclass(frozen=True)
class RunAnalysis:
    """What every example gets: the preset named, the explanation's settings as results record them (the explanation settings
    beside the model's window), the analyses' token score and top-k, the analyses added, and of their protocol only
    what those analyses use (rcqa.dataset.runner.Job.protocol)."""

    preset: str | None
    settings: dict[str, Any]
    aggregation: Aggregation
    top_k: int
    extras: tuple[str, ...] = ()
    draws: int | None = None
    spare_answer: bool | None = None
    naopc_beam: int | None = None
    operator: str | None = None

    def explained_with(self) -> tuple[ExplainSettings, Windowing]:
        """The settings every example was explained with, and the window the model read."""
        return split_recorded_settings(self.settings)

    def to_dict(self) -> dict[str, Any]:
        return _without_none({"preset": self.preset, "settings": self.settings, "aggregation": self.aggregation,
                              "top_k": self.top_k, "extras": list(self.extras), "draws": self.draws,
                              "spare_answer": self.spare_answer, "naopc_beam": self.naopc_beam,
                              "operator": self.operator})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunAnalysis:
        return cls(data.get("preset"), data["settings"], data["aggregation"], data["top_k"],
                   tuple(data.get("extras", ())), data.get("draws"), data.get("spare_answer"),
                   data.get("naopc_beam"), data.get("operator"))


@dataclass(frozen=True)
class RunData:
    """The data file read: as named on the command line (source), where it was, its sha256 and the selection."""

    path: str
    sha256: str
    limit: int | None = None
    source: str | None = None
    questions: str | None = None  # a selection of the questions other than all of them (`--questions`)

    def to_dict(self) -> dict[str, Any]:
        data = {"source": self.source, "path": self.path, "sha256": self.sha256, "limit": self.limit,
                "questions": self.questions}
        return {name: value for name, value in data.items() if value is not None or name == "limit"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunData:
        return cls(data["path"], data["sha256"], data.get("limit"), data.get("source"), data.get("questions"))


@dataclass(frozen=True)
class RunCounts:
    total: int
    done: int
    failed: int
    skipped: int | None = None  # a contrast run's questions without its foil; left out where there are none

    def to_dict(self) -> dict[str, int]:
        return _without_none({"total": self.total, "done": self.done, "failed": self.failed, "skipped": self.skipped})


@dataclass(frozen=True)
class Unexplained:
    """An example the run could not explain (failed), or that its contrast does not apply to (skipped)."""

    id: str
    reason: str


@dataclass(frozen=True)
class Session:
    """One invocation of the runner: when it started and finished (ISO 8601, UTC; None while it runs or where it
    was killed), the examples it computed and those that failed."""

    started: str
    finished: str | None = None
    computed: int = 0
    failed: int = 0
    scheduler: str | None = None  # "local" or the Dask scheduler's address

    def to_dict(self) -> dict[str, Any]:
        data = {"started": self.started, "finished": self.finished, "computed": self.computed, "failed": self.failed}
        return data if self.scheduler is None else {**data, "scheduler": self.scheduler}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Session:
        return cls(data["started"], data.get("finished"), data.get("computed", 0), data.get("failed", 0),
                   data.get("scheduler"))


@dataclass(frozen=True)
class RunManifest(Document):
    """A run folder's manifest.json (rcqa.dataset.store writes it atomically)."""

    model: RunModel
    analysis: RunAnalysis
    data: RunData
    counts: RunCounts | None = None  # None until the runner first saves it
    failed: tuple[Unexplained, ...] = ()
    runs: tuple[Session, ...] = ()
    skipped: tuple[Unexplained, ...] | None = None  # None: written before any example was skipped
    rcqa_version: str | None = None

    def identity(self) -> dict[str, Any]:
        """What must be equal for a resumed run's rows to be comparable with the earlier ones (as JSON reads it back,
        so a tuple and the list it was written as are equal)."""
        return json.loads(json.dumps({"model fingerprint": self.model.fingerprint,
                                      "settings": self.analysis.to_dict(), "data file (sha256)": self.data.sha256}))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "model": {"name": self.model.name, "fingerprint": self.model.fingerprint},
            "analysis": self.analysis.to_dict(), "data": self.data.to_dict(),
            "counts": {} if self.counts is None else self.counts.to_dict(),
            "failed": [vars(f) for f in self.failed], "runs": [s.to_dict() for s in self.runs]}
        if self.skipped is not None:
            data["skipped"] = [vars(s) for s in self.skipped]
        return data if self.rcqa_version is None else {"rcqa_version": self.rcqa_version, **data}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)  # as the runner has always written it

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunManifest:
        counts = data.get("counts") or None
        skipped = data.get("skipped")
        return cls(RunModel(data["model"]["name"], data["model"]["fingerprint"]),
                   RunAnalysis.from_dict(data["analysis"]), RunData.from_dict(data["data"]),
                   None if counts is None else RunCounts(counts["total"], counts["done"], counts["failed"],
                                                         counts.get("skipped")),
                   tuple(Unexplained(f["id"], f["reason"]) for f in data.get("failed", ())),
                   tuple(Session.from_dict(s) for s in data.get("runs", ())),
                   None if skipped is None else tuple(Unexplained(s["id"], s["reason"]) for s in skipped),
                   data.get("rcqa_version"))

    def __repr__(self) -> str:
        done = "" if self.counts is None else f" · {self.counts.done} of {self.counts.total} done"
        return (f"<RunManifest of model {self.model.name} ({self.model.fingerprint}) · preset "
                f"{self.analysis.preset or 'custom'} · {self.data.source or self.data.path}{done}>")
