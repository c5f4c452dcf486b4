"""One example's faithfulness comparison as a typed document: what `python -m rcqa faithfulness --json` writes and
what a dataset run's faithfulness cell is made from (rcqa.faithfulness.report builds it). to_dict writes the JSON
the document has always held, key for key and in its order, so that files written before it was typed load and
save back to the same text."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Any, Generic, TypeVar

from rcqa.faithfulness.summaries import SUMMARIES
from rcqa.types.document import Document
from rcqa.types.header import ResultHeader

Section = dict[str, Any]  # numbers the document carries as JSON, which no reader takes apart
CURVE_MEASURES = ("span_probability", "flipped", "f1")
Measure = TypeVar("Measure")  # a curve's values: a compared entry's list per point, or random's Spread of them


@dataclass(frozen=True)
class Spread:
    """Over random's draws (rcqa.faithfulness.metrics.spread): the mean, standard deviation and range of a number,
    or of each point of a curve; a summary's spread also holds each draw's value."""

    mean: Any  # a float, or a list of them per point
    std: Any
    min: Any
    max: Any
    draws: list[float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return _json(self, ("draws",) if self.draws is None else ())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Spread:
        return cls(**data)


@dataclass(frozen=True)
class DeletionCurve(Generic[Measure]):
    """Per count k of top words deleted (by the passage's fractions: also the fraction each k is), the explained
    span's probability, whether the answer flipped, and SQuAD F1 against the original answer."""

    k: list[int]
    span_probability: Measure
    flipped: Measure
    f1: Measure
    fraction: list[float] | None = None  # the curve over the passage's fractions only

    def to_dict(self) -> dict[str, Any]:
        measures = _json(self, ("fraction",))
        return measures if self.fraction is None else {"fraction": self.fraction, **measures}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeletionCurve:
        """A curve whose measures are lists, or (random's) spreads."""
        span_probability, flipped, f1 = (_measure(data[name]) for name in CURVE_MEASURES)
        return cls(data["k"], span_probability, flipped, f1, data.get("fraction"))


def _measure(values: list | dict[str, Any]) -> Any:
    """A compared entry's measure (a list per point) as it is, random's (a spread) as a Spread."""
    return Spread.from_dict(values) if isinstance(values, dict) else values


@dataclass(frozen=True)
class VersusRandom:
    """A compared entry against random deletion (rcqa.faithfulness.report.versus_random)."""

    drop_ratio: list[float | None]
    below_every_random_draw: list[bool]
    aopc_minus_random: float
    random_aopc_range: list[float]
    reading: str
    comprehensiveness_reading: str


def kept_summaries(summaries: dict[str, Any]) -> dict[str, Any]:
    """A document's summaries by name, in the registry's order (rcqa.faithfulness.summaries): those computed, and
    null for a summary the files have always held (naopc, unless AOPC's bounds were searched); one not computed
    (soft comprehensiveness of a comparison saved before it) is left out, so such a file saves back as it was."""
    return {name: summaries.get(name) for name, summary in SUMMARIES.items()
            if summaries.get(name) is not None or summary.null_written}


def _with_summaries(data: dict[str, Any], summaries: dict[str, Any], before: str | None) -> dict[str, Any]:
    """The JSON with each summary under its own key, where the typed fields stood (before the key `before`, or last)."""
    keys = list(data)
    at = keys.index(before) if before is not None else len(keys)
    return {**{key: data[key] for key in keys[:at]}, **{name: _plain(value) for name, value in summaries.items()},
            **{key: data[key] for key in keys[at:]}}


def _read_summaries(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A JSON's summaries (by their registered names) and the rest of its keys."""
    return ({name: data[name] for name in SUMMARIES if name in data},
            {key: value for key, value in data.items() if key not in SUMMARIES})


@dataclass(frozen=True)
class EntryFaithfulness:
    """A compared entry (a method under one ranking): its scores, its ranking, its deletion curves, its summaries by
    name (kept_summaries: naopc None unless AOPC's bounds were searched), and how it fares against random."""

    method: str
    ranked_by: str
    ranked_by_description: str
    label: str
    description: str
    scores: list[float]
    word_scores: list[float]
    ranking: list[int]
    deletion: DeletionCurve[list]
    deletion_by_fraction: DeletionCurve[list]
    summaries: dict[str, float | None]
    versus_random: VersusRandom

    def __post_init__(self):
        object.__setattr__(self, "summaries", kept_summaries(self.summaries))

    def to_dict(self) -> dict[str, Any]:
        return _with_summaries(_json(self, ("summaries",)), self.summaries, "versus_random")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EntryFaithfulness:
        summaries, rest = _read_summaries(data)
        return cls(**{**rest, "deletion": DeletionCurve.from_dict(data["deletion"]),
                      "deletion_by_fraction": DeletionCurve.from_dict(data["deletion_by_fraction"]),
                      "summaries": summaries, "versus_random": VersusRandom(**data["versus_random"])})


@dataclass(frozen=True)
class RandomFaithfulness:
    """Random deletion over its draws: each draw's scores and ranking, and of every curve and summary the spread
    over the draws (a summary's also each draw's value, under "draws"); naopc None unless the bounds were searched."""

    description: str
    scores: list[list[float]]
    rankings: list[list[int]]
    deletion: DeletionCurve[Spread]
    deletion_by_fraction: DeletionCurve[Spread]
    summaries: dict[str, Spread | None]

    def __post_init__(self):
        object.__setattr__(self, "summaries", kept_summaries(self.summaries))

    def to_dict(self) -> dict[str, Any]:
        return _with_summaries(_json(self, ("summaries",)), self.summaries, None)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RandomFaithfulness:
        found, rest = _read_summaries(data)
        return cls(**{**rest, "deletion": DeletionCurve.from_dict(data["deletion"]),
                      "deletion_by_fraction": DeletionCurve.from_dict(data["deletion_by_fraction"]),
                      "summaries": {name: None if value is None else Spread.from_dict(value)
                                    for name, value in found.items()}})


@dataclass(frozen=True)
class ReportProtocol:
    """How the words were deleted and the curves read (rcqa.faithfulness.compare.Protocol, as the document says it)."""

    operator: str
    operator_description: str
    k: int
    fractions: list[float]
    eraser_bins: list[float]
    draws: int
    seeds: list[int]
    spare_answer: bool
    naopc_beam: int
    deletable_words: list[int]
    reading_k: int


@dataclass(frozen=True)
class OriginalAnswer:
    """The window answered with nothing deleted: its text, its characters and the explained span's probability."""

    answer: str
    characters: list[int] | None
    span_probability: float


@dataclass(frozen=True)
class FaithfulnessReport(Document):
    """Every compared entry's scores, deletion curves and summaries (comprehensiveness, AOPC, …), each against
    random's, the entries' rank correlations and paired differences, and the verdict they allow; with what every
    result says it is of (its header). `sanity`: the sanity checks' section, where they were run."""

    header: ResultHeader  # the example, the model, its answer and the window read; the JSON's first keys
    token_segments: list[str]
    target: Section  # the explained target with its span's characters (Comparison.target_dict)
    passage_words: list[str]
    passage_word_tokens: list[list[int]]
    protocol: ReportProtocol
    original: OriginalAnswer
    methods: dict[str, EntryFaithfulness]
    random: RandomFaithfulness
    aopc_bounds: dict[str, float] | None  # "lower" and "upper"; None where no beam searched them
    rank_correlation: Section
    paired: dict[str, list[Section]]  # per measure, every pair's PairedDifference
    verdict: str
    seconds: dict[str, float]
    sanity: Section | None = None  # SanityCheck.to_dict(); left out of the JSON where the checks were not run

    def to_dict(self) -> dict[str, Any]:
        data = _json(self, ("header", "sanity") if self.sanity is None else ("header",))
        return {**self.header.header_dict(), **data,
                "methods": {name: entry.to_dict() for name, entry in self.methods.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaithfulnessReport:
        header = ResultHeader(**ResultHeader.header_fields(data))
        rest = {name: value for name, value in data.items() if name not in header.header_dict()}
        return cls(**{**rest, "header": header, "protocol": ReportProtocol(**data["protocol"]),
                      "original": OriginalAnswer(**data["original"]),
                      "methods": {name: EntryFaithfulness.from_dict(entry) for name, entry in data["methods"].items()},
                      "random": RandomFaithfulness.from_dict(data["random"])})

    def __repr__(self) -> str:
        header = self.header
        return (f"<FaithfulnessReport of {header.example.id!r} · model {header.model} ({header.fingerprint}) · "
                f"{len(self.methods)} entries against random over {self.protocol.draws} draws>")


def _json(document: Any, left_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """A dataclass' fields in their order (the JSON's), each typed part as its own JSON; `left_out`: the fields
    whose keys this JSON does not hold (a None the files leave out)."""
    return {field.name: _plain(getattr(document, field.name)) for field in fields(document)
            if field.name not in left_out}


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else value
