"""Which explanation to trust: every method's word ranking put to the deletion test, against random rankings.

For one example: each method scores the window's tokens for the same target (rcqa.attribution.methods), under
each of its rankings (signed and magnitude where it has a sign: one rule for every method); the scores are
normalised and summed into passage-word scores (words are what users see); the words are ranked; and
the window is re-answered with the ranking's top words deleted, for every count the protocol asks for, in one
batched forward per method (rcqa.faithfulness.deletion). Random rankings go through the same test, several seeded
draws in one batch.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.methods import (
    COMPARED,
    METHODS,
    RANKINGS,
    Case,
    make_method,
    normalised,
    word_scores,
)
from rcqa.attribution.methods.random_baseline import RandomBaseline
from rcqa.attribution.cost import FORWARD
from rcqa.evaluate import f1
from rcqa.faithfulness.cost import deletion_variants, passes_after_each, search_variants
from rcqa.faithfulness.deletion import OPERATORS, Reanswer, reanswer
from rcqa.faithfulness.entry import Entry
from rcqa.faithfulness.metrics import aopc_bounds, fraction_count
from rcqa.faithfulness.summaries import SUMMARIES
from rcqa.model import QAModel
from rcqa.types import Example, ExplainedTarget, ResultHeader, Word, explained_target, overlaps

FRACTIONS = (0.01, 0.02, 0.05, 0.10, 0.20)  # of the passage's words, deleted from the top
ERASER_BINS = (0.01, 0.05, 0.10, 0.20, 0.50)  # ERASER's rationale sizes for comprehensiveness and sufficiency


@dataclass(frozen=True)
class Protocol:
    """What is deleted, and how: the top k = 0..k words and the top fractions of the deletable passage words;
    ERASER's bins for comprehensiveness and sufficiency; random draws and their first seed; the deletion operator;
    whether the explained span's own words are spared (by default they are: deleting the answer itself lowers its
    probability whatever ranks it first, so only the context a method finds tells methods apart); and the beam of
    the search for AOPC's bounds behind normalised AOPC (0: not searched, the cost being about 2 · beam · words · k
    re-answers)."""

    k: int = 10
    fractions: tuple[float, ...] = FRACTIONS
    bins: tuple[float, ...] = ERASER_BINS
    draws: int = 5
    seed: int = 0
    operator: str = "pad"
    spare_answer: bool = True  # never delete the explained span's own words: test the context a method finds
    naopc_beam: int = 0

    def __post_init__(self):
        if self.k < 0 or self.draws < 1 or self.naopc_beam < 0:
            raise ValueError("k and naopc_beam must be 0 or more and draws 1 or more")
        if not all(0 < f <= 1 for f in (*self.fractions, *self.bins)):
            raise ValueError("fractions and bins are shares of the passage, in (0, 1]")
        if self.operator not in OPERATORS:
            raise ValueError(f"unknown deletion operator {self.operator!r}; choose one of {', '.join(OPERATORS)}")

    def ks(self, words: int) -> list[int]:
        """The deletion curve's k: 0 … k, or up to the passage's word count if it has fewer words."""
        return list(range(min(self.k, words) + 1))

    def fraction_ks(self, words: int) -> list[int]:
        return [fraction_count(f, words) for f in self.fractions]

    def bin_ks(self, words: int) -> list[int]:
        return [fraction_count(b, words) for b in self.bins]

    def seeds(self) -> list[int]:
        return [self.seed + draw for draw in range(self.draws)]

    @classmethod
    def from_dict(cls, data: dict) -> Protocol:
        return cls(**{**data, "fractions": tuple(data["fractions"]), "bins": tuple(data["bins"])})


@dataclass(frozen=True)
class Deletions:
    """One ranking of the deletable passage words (indices, best first) and the window re-answered with its top c
    words deleted (without_top[c]) and with every deletable word deleted but its top c (only_top[c])."""

    ranking: tuple[int, ...]
    without_top: dict[int, Reanswer]
    only_top: dict[int, Reanswer]

    def to_dict(self) -> dict:
        """JSON keys are strings: each deletion is a [count, re-answer] pair."""
        return {"ranking": list(self.ranking),
                **{part: [[count, asdict(found)] for count, found in getattr(self, part).items()]
                   for part in ("without_top", "only_top")}}

    @classmethod
    def from_dict(cls, data: dict) -> Deletions:
        return cls(tuple(data["ranking"]), *({count: Reanswer.from_dict(found) for count, found in data[part]}
                                             for part in ("without_top", "only_top")))


@dataclass
class MethodResult:
    """One method's normalised token scores, passage-word scores and deletions under one of its rankings: one draw
    for a method, several for random. `name` is the entry's (Entry.name)."""

    name: str
    description: str
    scores: list[np.ndarray]  # per draw, per token of the window
    word_scores: list[np.ndarray]  # per draw, per passage word
    deletions: list[Deletions]  # per draw
    method: str = ""
    ranked_by: str = ""  # a ranking of RANKINGS: signed, magnitude or random
    # per draw, the span's probability in the re-answers of each summary that perturbs the input its own way (by
    # the summary's name; rcqa.faithfulness.summaries); empty in comparisons saved before any summary did
    reanswered: list[dict[str, list[float]]] = field(default_factory=list)

    def __post_init__(self):
        if not (self.method and self.ranked_by):  # a result saved before it held its method and ranking apart
            entry = Entry.parse(self.name)
            self.method, self.ranked_by = entry.method, entry.ranking

    def to_dict(self) -> dict:
        return {"name": self.name, "method": self.method, "ranked_by": self.ranked_by, "description": self.description,
                "scores": [s.tolist() for s in self.scores], "word_scores": [s.tolist() for s in self.word_scores],
                "deletions": [d.to_dict() for d in self.deletions], "reanswered": self.reanswered}

    @classmethod
    def from_dict(cls, data: dict) -> MethodResult:
        return cls(data["name"], data["description"], [np.asarray(s, dtype=float) for s in data["scores"]],
                   [np.asarray(s, dtype=float) for s in data["word_scores"]],
                   [Deletions.from_dict(d) for d in data["deletions"]], data.get("method", ""),
                   data.get("ranked_by", ""), data.get("reanswered", []))


@dataclass(repr=False)
class Comparison(ResultHeader):
    """Every method's faithfulness on one example, with what the figures and the JSON need of the example."""

    token_segments: list[str]
    words: list[Word]  # the passage's words in the window (no punctuation): what is scored and ranked
    deletable: list[int]  # indices into words that may be deleted (all, or all but the explained span's)
    target: ExplainedTarget  # what every method explains: its target at the explained span
    span_chars: tuple[int, int]  # [start_char, end_char) of the explained span
    protocol: Protocol
    original: Reanswer  # the window answered with nothing deleted
    methods: dict[str, MethodResult]  # per entry (a method under one ranking), random last
    seconds: dict[str, float] = field(default_factory=dict)  # per method its attribution; "deletion": all deletions
    aopc_bounds: tuple[float, float] | None = None  # the least and greatest AOPC the beam search found (naopc_beam)

    kind = "comparison"

    def to_dict(self) -> dict:
        """Every field, for save and load (rcqa.faithfulness.report.faithfulness_report builds the report)."""
        return {**self.header_dict(), "token_segments": self.token_segments, "words": [asdict(w) for w in self.words],
                "deletable": self.deletable, "target": self.target_dict(), "protocol": asdict(self.protocol),
                "original": asdict(self.original), "methods": [m.to_dict() for m in self.methods.values()],
                "seconds": self.seconds, "aopc_bounds": self.aopc_bounds}

    def target_dict(self) -> dict:
        """The target as the JSON writes it: the explained span's characters beside it."""
        return {**self.target.to_dict(), "start_char": self.span_chars[0], "end_char": self.span_chars[1]}

    @classmethod
    def from_dict(cls, data: dict) -> Comparison:
        target = data["target"]
        return cls(**cls.header_fields(data), token_segments=data["token_segments"],
                   words=[Word.from_dict(w) for w in data["words"]],
                   deletable=data["deletable"], target=ExplainedTarget.from_dict(target, data["window"]),
                   span_chars=(target["start_char"], target["end_char"]), protocol=Protocol.from_dict(data["protocol"]),
                   original=Reanswer.from_dict(data["original"]), methods={m["name"]: MethodResult.from_dict(m) for m in data["methods"]},
                   seconds=data["seconds"],
                   aopc_bounds=tuple(data["aopc_bounds"]) if data["aopc_bounds"] is not None else None)

    @property
    def random(self) -> MethodResult:
        return self.methods[RandomBaseline.name]

    def compared(self) -> list[MethodResult]:
        return [result for name, result in self.methods.items() if name != RandomBaseline.name]

    def probabilities(self, result: MethodResult, counts: Sequence[int], kept: bool = False) -> np.ndarray:
        """draws × counts: the explained span's probability with the top c words deleted (or all but them)."""
        return np.array([[(d.only_top if kept else d.without_top)[c].span_probability for c in counts]
                         for d in result.deletions])

    def flips(self, result: MethodResult, counts: Sequence[int]) -> np.ndarray:
        """draws × counts: whether the answer moved when the top c words were deleted."""
        return np.array([[d.without_top[c].answer != self.original.answer for c in counts] for d in result.deletions])

    def f1s(self, result: MethodResult, counts: Sequence[int]) -> np.ndarray:
        """draws × counts: SQuAD F1 of the answer with the top c words deleted against the original answer."""
        return np.array([[f1(d.without_top[c].text, self.original.text) for c in counts] for d in result.deletions])


def compare(qa_model: QAModel, example: Example, methods: Sequence[str] = COMPARED, protocol: Protocol | None = None,
            settings: ExplainSettings | None = None,
            known: Mapping[str, Mapping[str, np.ndarray]] | None = None,
            progress: Callable[[float, str], None] | None = None) -> Comparison:
    """Score the example with each method under each of its rankings (the target and span of `settings`; IG with
    its baseline and rule), then delete each ranking's top words and re-answer, against `protocol.draws` random
    rankings. `known` holds, per method and ranking, token scores some methods already gave for this same window and
    target (the dataset runner passes IG's, from the layer-wise explanation's embeddings layer), which are used
    instead of computing them again. `progress` is told (the share of the work done, where it is) after each method
    and each batch of re-answers, the share weighed by the cost model's passes (rcqa.faithfulness.cost)."""
    protocol, settings = protocol or Protocol(), settings or ExplainSettings()
    report = progress or _unheard
    case = Case.of(qa_model, example, settings.targets[0], settings.span, settings.allow_null)
    names = [*dict.fromkeys(m for m in methods if m != RandomBaseline.name), RandomBaseline.name]
    words = case.passage_words()
    span = case.window.offsets[case.target.start_token][0], case.window.offsets[case.target.end_token][1]
    deletable = [i for i, w in enumerate(words)
                 if not (protocol.spare_answer and overlaps(*span, w.start_char, w.end_char))]
    shares = work_shares(settings, names, protocol, len(deletable))
    scores, seconds = _scores(case, names, protocol, settings, known or {},
                              lambda index: report(shares.scored[index], _method_step(names, index)))
    entries = list(scores)  # each method under each of its rankings
    per_word = {entry: [word_scores(s, words) for s in draws] for entry, draws in scores.items()}
    started = time.perf_counter()
    (original,) = reanswer(case, [()], protocol.operator)
    ranked = [w for entry in entries for w in per_word[entry]]
    own = len(ranked) * sum(summary.variants for summary in SUMMARIES.values())  # the summaries' re-answers, after
    deletions = iter(delete_top_words(
        case, [_ranking(w, deletable) for w in ranked], protocol, original,
        lambda done, total: report(shares.deleted(done / (total + own)),
                                   f"re-answering with words deleted: {done} of {total} variants")))
    reanswered = iter(reanswer_by_summaries(case, words, deletable, ranked))
    seconds["deletion"] = time.perf_counter() - started
    bounds = None
    if protocol.naopc_beam:
        started = time.perf_counter()
        bounds = aopc_bounds(original.span_probability,
                             lambda sets: [r.span_probability for r in reanswer(case, sets, protocol.operator)],
                             deletable, protocol.ks(len(deletable))[-1], protocol.naopc_beam)
        seconds["aopc_bounds"] = time.perf_counter() - started
    report(1.0, f"compared {len(entries)} rankings with random ones")
    return Comparison(
        example=example, model=qa_model.name, fingerprint=qa_model.fingerprint, answer=case.window.answer,
        window=case.window.window,
        tokens=qa_model.tokenizer.convert_ids_to_tokens(case.window.inputs["input_ids"][0].tolist()),
        token_segments=case.window.segments, words=words, deletable=deletable,
        target=explained_target(case.target, case.window.span_text(example.passage), case.window.window),
        span_chars=span,
        protocol=protocol, original=original, seconds=seconds, aopc_bounds=bounds,
        methods={entry.name: MethodResult(entry.name, METHODS[entry.method].description, scores[entry],
                                          per_word[entry], [next(deletions) for _ in scores[entry]], entry.method,
                                          entry.ranking, [next(reanswered) for _ in scores[entry]])
                 for entry in entries})


@dataclass(frozen=True)
class WorkShares:
    """A comparison's share of the work done after each method's scores (`scored`, in the methods' order) and, from
    there, through the deletions' re-answers; the rest (the AOPC search) is done at 1."""

    scored: tuple[float, ...]
    deletion: float

    def deleted(self, part: float) -> float:
        """The share done once `part` of the deletions' re-answers are."""
        return self.scored[-1] + self.deletion * part


def work_shares(settings: ExplainSettings, methods: Sequence[str], protocol: Protocol, words: int) -> WorkShares:
    """The shares of a comparison's block passes (rcqa.faithfulness.cost: the recording forward, each method's, a
    forward per variant with words deleted, the AOPC search's) done after each part, `words` deletable."""
    spent = passes_after_each(settings, methods)
    deletion = FORWARD * deletion_variants(methods, protocol.draws, protocol.k, len(protocol.fractions),
                                           len(protocol.bins), 0, words)
    search = FORWARD * search_variants(protocol.naopc_beam, words, protocol.k)
    total = spent[-1] + deletion + search
    return WorkShares(tuple(passes / total for passes in spent), deletion / total)


def _method_step(methods: Sequence[str], index: int) -> str:
    return f"method {index + 1} of {len(methods)}: {METHODS[methods[index]].label}"


def _unheard(share: float, where: str) -> None:
    """No one listens to the progress."""


def _scores(case: Case, methods: list[str], protocol: Protocol, settings: ExplainSettings,
            known: Mapping[str, Mapping[str, np.ndarray]],
            scored: Callable[[int], None]) -> tuple[dict[Entry, list[np.ndarray]], dict[str, float]]:
    """Per entry (a method under one of its rankings), its normalised token scores (one per random draw), and per
    method the seconds its scores took (0 if known); scored(i) once the i-th method is done."""
    scores: dict[Entry, list[np.ndarray]] = {}
    seconds: dict[str, float] = {}
    for index, method in enumerate(methods):
        started = time.perf_counter()
        seeds = protocol.seeds() if method == RandomBaseline.name else [protocol.seed]
        draws = ([known[method]] if method in known
                 else [make_method(method, settings, seed).attribute(case) for seed in seeds])
        for ranking in METHODS[method].rankings:
            scores[Entry(method, ranking)] = [normalised(draw[ranking], case.special) for draw in draws]
        seconds[method] = time.perf_counter() - started
        scored(index)
    return scores, seconds


def _ranking(scores: np.ndarray, deletable: list[int]) -> np.ndarray:
    """The deletable words, best first (a tie keeps text order)."""
    return np.array(deletable, dtype=int)[np.argsort(-scores[deletable], kind="stable")]


def reanswer_by_summaries(case: Case, words: list[Word], deletable: list[int],
                          word_scores: list[np.ndarray]) -> list[dict[str, list[float]]]:
    """Per ranking (given by its passage-word scores), the re-answers of every summary that perturbs the input its
    own way (soft comprehensiveness and sufficiency scale the embeddings), by the summary's name."""
    found: list[dict[str, list[float]]] = [{} for _ in word_scores]
    for summary in SUMMARIES.values():
        made = summary.reanswer(case, words, deletable, word_scores)
        for row, values in enumerate(made or []):
            found[row][summary.name] = values.tolist()
    return found


def delete_top_words(case: Case, rankings: list[np.ndarray], protocol: Protocol, original: Reanswer,
                     answered: Callable[[int, int], None] | None = None) -> list[Deletions]:
    """Each ranking's deletions (every count of the protocol's curve, fractions and bins, and ERASER's keep-only
    variants), rankings being of the same deletable words. A set of words asked for more than once, by one ranking
    or several, is answered once; the empty set is the original answer; the rest go through the model in batches,
    answered(variants done, variants in all) told after each."""
    words = len(rankings[0])
    deleted_counts = sorted({*protocol.ks(words), *protocol.fraction_ks(words), *protocol.bin_ks(words)})
    kept_counts = sorted(set(protocol.bin_ks(words)))
    wanted = dict.fromkeys(frozenset(chosen.tolist()) for ranking in rankings
                           for chosen in [*(ranking[:c] for c in deleted_counts), *(ranking[c:] for c in kept_counts)])
    wanted.pop(frozenset(), None)
    answers = {frozenset(): original, **dict(zip(wanted, reanswer(case, list(wanted), protocol.operator,
                                                                answered=answered)))}
    return [Deletions(tuple(ranking.tolist()), {c: answers[frozenset(ranking[:c].tolist())] for c in deleted_counts},
                      {c: answers[frozenset(ranking[c:].tolist())] for c in kept_counts}) for ranking in rankings]
