"""A run's dataset-level numbers, typed: what rcqa.dataset.aggregate.summarize computes over a run's rows and what
the report's summary.json, its figures and the Dataset page read. The paper's analyses are fields; the analyses a
run may add (faithfulness, lens, interventions, sanity checks, head scores, pruning, contrast) and the layer roles by
sentence are JSON sections, None where the run did not compute them (or its rows keep no sentence scores). to_dict
writes the keys summary.json has always held, in their order."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from rcqa import drawing
from rcqa.dataset.manifest import RunAnalysis, RunData
from rcqa.types.document import Document

PerLayer = list[Any]  # one value per layer (a float, None where undefined)
Section = dict[str, Any]  # an analysis' numbers as JSON, as its summarize_* function in rcqa.dataset writes them
# the added analyses' sections, in summary.json's order; a summary written before one existed lacks its key
SECTIONS = ("faithfulness", "lens", "interventions", "sanity", "heads", "pruning", "contrast", "sentences")
VIEWS = ("roles", "quantifier", "jsd", "pos", "scores", "completeness", "sentences")  # what DatasetSummary.show draws


@dataclass(frozen=True)
class DatasetSummary(Document):
    """Over a run's rows (or a selection of them): the scores, per layer the shares of the top-k words' roles and
    parts of speech with 95 % intervals, the JSD between layers, the quantifier analysis, completeness, the added
    analyses' sections, and the manifest's model, settings and data; the run's throughput."""

    n: int
    n_failed: int
    exact_match: float | None
    f1: float | None
    layers: list[str]
    roles: dict[str, PerLayer]
    roles_ci: dict[str, list[PerLayer]]
    jsd: dict[str, list[PerLayer]]  # per variant the layers × layers mean JSD, None where undefined
    jsd_range: dict[str, dict[str, float | None]]  # per variant the smallest and largest entry off the diagonal
    pos: dict[str, PerLayer]
    pos_ci: dict[str, list[PerLayer]]
    answer_pos: dict[str, float | None]
    quantifier: Section
    question_types: dict[str, Section]  # per question type: n, exact_match, f1
    completeness: dict[str, PerLayer]  # per layer: median and max relative error, median path points
    settings: RunAnalysis
    model: str
    fingerprint: str
    data: RunData
    seconds: float
    examples_per_hour: float | None
    n_skipped: int = 0  # a contrast run's questions without its foil
    faithfulness: Section | None = None
    lens: Section | None = None
    interventions: Section | None = None
    sanity: Section | None = None
    heads: Section | None = None
    pruning: Section | None = None
    contrast: Section | None = None
    sentences: Section | None = None  # the layer roles by sentence (rcqa.dataset.sentence_roles.summarize_sentences)

    @property
    def name(self) -> str:
        """The summary's name in a chart of its own: its preset's."""
        return self.settings.preset or "custom"

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "n_failed": self.n_failed, "exact_match": self.exact_match, "f1": self.f1,
                "layers": self.layers, "roles": self.roles, "roles_ci": self.roles_ci, "jsd": self.jsd,
                "jsd_range": self.jsd_range, "pos": self.pos, "pos_ci": self.pos_ci, "answer_pos": self.answer_pos,
                "quantifier": self.quantifier, "question_types": self.question_types,
                "completeness": self.completeness, **{name: getattr(self, name) for name in SECTIONS},
                "n_skipped": self.n_skipped, "settings": self.settings.to_dict(), "model": self.model,
                "fingerprint": self.fingerprint, "data": self.data.to_dict(), "seconds": self.seconds,
                "examples_per_hour": self.examples_per_hour}

    def to_json(self) -> str:
        return summary_json(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DatasetSummary:
        return cls(n=data["n"], n_failed=data["n_failed"], exact_match=data["exact_match"], f1=data["f1"],
                   layers=data["layers"], roles=data["roles"], roles_ci=data["roles_ci"], jsd=data["jsd"],
                   jsd_range=data["jsd_range"], pos=data["pos"], pos_ci=data["pos_ci"], answer_pos=data["answer_pos"],
                   quantifier=data["quantifier"], question_types=data["question_types"],
                   completeness=data["completeness"], settings=RunAnalysis.from_dict(data["settings"]),
                   model=data["model"], fingerprint=data["fingerprint"], data=RunData.from_dict(data["data"]),
                   seconds=data["seconds"], examples_per_hour=data["examples_per_hour"],
                   n_skipped=data.get("n_skipped", 0),  # the sections below: None in summaries written before them
                   faithfulness=data.get("faithfulness"), lens=data.get("lens"),
                   interventions=data.get("interventions"), sanity=data.get("sanity"), heads=data.get("heads"),
                   pruning=data.get("pruning"), contrast=data.get("contrast"), sentences=data.get("sentences"))

    def show(self, view: str = "roles", **options):
        """The Plotly figure of one of VIEWS: the roles of the top-k words per layer, the quantifier ratio, the JSD
        between layers (variant="full", "topk_removed" or "topk_kept"), the parts of speech, the scores per question
        type, the completeness error, each beside the published numbers, or the layer roles by sentence (a run whose
        rows keep sentence scores)."""
        return drawing.figure(self, view, **options)

    def _repr_html_(self) -> str:
        return drawing.html(self)

    def __repr__(self) -> str:
        em = "–" if self.exact_match is None else f"{self.exact_match:.1f}"
        return (f"<DatasetSummary of {self.n} questions · model {self.model} ({self.fingerprint}) · preset "
                f"{self.name} · EM {em} · {len(self.layers)} layers>")


def json_safe(value: Any) -> Any:
    """NaN (undefined) as null, which JSON has."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def summary_json(data: dict[str, Any]) -> str:
    """summary.json's text, as the report has always written it."""
    return json.dumps(json_safe(data), indent=1) + "\n"
