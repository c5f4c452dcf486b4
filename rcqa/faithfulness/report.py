"""One example's faithfulness comparison as one typed document (rcqa.faithfulness.document.FaithfulnessReport):
what `python -m rcqa faithfulness` writes and what a dataset run stores per example (see the README's "Which
explanation to trust")."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rcqa.attribution.methods import COMPARED
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.methods import RANKINGS
from rcqa.faithfulness.compare import Comparison, MethodResult, Protocol, compare
from rcqa.faithfulness.entry import entry_label
from rcqa.faithfulness.deletion import OPERATORS
from rcqa.faithfulness.document import (
    DeletionCurve,
    EntryFaithfulness,
    FaithfulnessReport,
    OriginalAnswer,
    RandomFaithfulness,
    ReportProtocol,
    Spread,
    VersusRandom,
)
from rcqa.faithfulness.metrics import drop_ratio, rank_correlations, reading, spread, summary_reading
from rcqa.faithfulness.paired import paired_differences, verdict
from rcqa.faithfulness.summaries import SUMMARIES, Evidence
from rcqa.model import QAModel
from rcqa.types import Example
from rcqa.types.header import ResultHeader

READING_K = 5  # the words deleted in the one-sentence reading of each method's curve


def example_faithfulness(qa_model: QAModel, example: Example, methods: Sequence[str] = COMPARED,
                         protocol: Protocol | None = None, settings: ExplainSettings | None = None,
                         known: Mapping[str, Mapping[str, np.ndarray]] | None = None) -> FaithfulnessReport:
    """Compare the methods on one example and return its report (no file is written); `known`: scores already
    computed (see compare)."""
    return faithfulness_report(compare(qa_model, example, methods, protocol, settings, known))


def faithfulness_report(comparison: Comparison) -> FaithfulnessReport:
    """Every method's scores, deletion curves and summaries (rcqa.faithfulness.summaries), each against random's mean
    and spread over its draws, and the methods' rank correlations."""
    protocol, words, original = comparison.protocol, comparison.words, comparison.original
    found = every_measure(comparison)
    bounds = aopc_range(comparison, found)
    random = found[comparison.random.name]
    methods = {result.name: _single(result, found[result.name], versus_random(comparison, found[result.name], random))
               for result in comparison.compared()}
    paired, sentence = one_question_verdict(found)
    return FaithfulnessReport(
        header=ResultHeader(comparison.example, comparison.model, comparison.fingerprint, comparison.answer,
                            comparison.window, comparison.tokens),
        token_segments=comparison.token_segments, target=comparison.target_dict(),
        passage_words=[w.text for w in words], passage_word_tokens=[list(w.tokens) for w in words],
        protocol=ReportProtocol(
            operator=protocol.operator, operator_description=OPERATORS[protocol.operator], k=protocol.k,
            fractions=list(protocol.fractions), eraser_bins=list(protocol.bins), draws=protocol.draws,
            seeds=protocol.seeds(), spare_answer=protocol.spare_answer, naopc_beam=protocol.naopc_beam,
            deletable_words=comparison.deletable, reading_k=reading_k(comparison)),
        original=OriginalAnswer(answer=original.text, characters=list(original.answer) if original.answer else None,
                                span_probability=original.span_probability),
        methods=methods, random=_spread(comparison.random, random),
        aopc_bounds=None if bounds is None else {"lower": bounds[0], "upper": bounds[1]},
        rank_correlation=rank_correlations({r.name: r.word_scores[0] for r in comparison.compared()}),
        paired=paired, verdict=sentence, seconds=comparison.seconds)


def one_question_verdict(found: Mapping[str, dict]) -> tuple[dict, str]:
    """Every pair's paired differences over this one question (random: the mean of its draws) and the verdict they
    allow (rcqa.faithfulness.paired); `found`: each entry's measures."""
    paired = paired_differences({name: {m: np.atleast_1d(np.mean(v)) for m, v in values["summaries"].items()
                                        if v is not None} for name, values in found.items()})
    return paired, verdict(paired, {name: float(np.mean(values["summaries"]["aopc"])) for name, values in found.items()},
                           entry_label)


def measures(comparison: Comparison, result: MethodResult, bounds: tuple[float, float] | None = None) -> dict:
    """Per draw (first axis): the deletion curve over k, the curve over the passage fractions, and every registered
    summary by name (None where this comparison cannot give it; naopc needs AOPC's `bounds`), all from the explained
    span's probability p and the re-answers."""
    protocol, words, p0 = comparison.protocol, len(comparison.deletable), comparison.original.span_probability
    ks, fraction_ks, bin_ks = protocol.ks(words), protocol.fraction_ks(words), protocol.bin_ks(words)

    def curve(counts: list[int]) -> dict:
        return {"span_probability": comparison.probabilities(result, counts),
                "flipped": comparison.flips(result, counts), "f1": comparison.f1s(result, counts)}

    reanswered = {name: np.array([draw[name] for draw in result.reanswered])
                  for name in SUMMARIES if result.reanswered and all(name in draw for draw in result.reanswered)}
    evidence = Evidence(p0, comparison.probabilities(result, ks), comparison.probabilities(result, bin_ks),
                        comparison.probabilities(result, bin_ks, True), reanswered, bounds)
    return {
        "deletion": {"k": ks, **curve(ks)},
        "deletion_by_fraction": {"fraction": list(protocol.fractions), "k": fraction_ks, **curve(fraction_ks)},
        "summaries": {name: summary.values(evidence) for name, summary in SUMMARIES.items()},
    }


def every_measure(comparison: Comparison) -> dict[str, dict]:
    """Every entry's measures (random's too), by name; normalised AOPC within aopc_range."""
    bounds = aopc_range(comparison, {result.name: measures(comparison, result) for result in comparison.methods.values()})
    return {result.name: measures(comparison, result, bounds) for result in comparison.methods.values()}


def aopc_range(comparison: Comparison, found: Mapping[str, dict]) -> tuple[float, float] | None:
    """AOPC's bounds for normalised AOPC: the beam search's, widened to every AOPC a ranking here reached (each is
    an ordering's, so a narrower beam bound is wrong); None when no search was made."""
    if comparison.aopc_bounds is None:
        return None
    reached = np.concatenate([values["summaries"]["aopc"] for values in found.values()])
    return (min(comparison.aopc_bounds[0], float(reached.min())), max(comparison.aopc_bounds[1], float(reached.max())))


def reading_k(comparison: Comparison) -> int:
    return min(READING_K, comparison.protocol.ks(len(comparison.deletable))[-1])


def versus_random(comparison: Comparison, method: dict, random: dict) -> VersusRandom:
    """A method's measures against random's: per k, how many times more the method lowers p than random's mean
    does (null where random does not lower it) and whether it lowers p below every random draw; the AOPC
    difference and random's AOPC range; and a one-sentence reading at k = reading_k."""
    p0 = comparison.original.span_probability
    curve, random_curve = method["deletion"]["span_probability"][0], random["deletion"]["span_probability"]
    k = reading_k(comparison)
    own, drawn = method["summaries"], random["summaries"]
    return VersusRandom(
        drop_ratio=[drop_ratio(p0, m, r) for m, r in zip(curve, random_curve.mean(axis=0))],
        below_every_random_draw=(curve < random_curve.min(axis=0)).tolist(),
        aopc_minus_random=float(own["aopc"][0] - drawn["aopc"].mean()),
        random_aopc_range=[float(drawn["aopc"].min()), float(drawn["aopc"].max())],
        reading=reading(k, p0, curve[k], random_curve[:, k]),
        comprehensiveness_reading=summary_reading(
            "comprehensiveness (the probability lost with the top 1, 5, 10, 20 and 50 % of the words deleted, "
            "ERASER's bins)", float(own["comprehensiveness"][0]), drawn["comprehensiveness"], True),
    )


def readings(comparison: Comparison) -> dict[str, str]:
    """Per compared method, what its deletion curve at k = reading_k shows against random, then where its
    comprehensiveness (the table's) falls among random's draws: the two can disagree, and both are said."""
    random = measures(comparison, comparison.random)
    found = {result.name: versus_random(comparison, measures(comparison, result), random)
             for result in comparison.compared()}
    return {name: " ".join(filter(None, (versus.reading, against_the_answer(comparison, comparison.methods[name]),
                                        versus.comprehensiveness_reading)))
            for name, versus in found.items()}


def against_the_answer(comparison: Comparison, result: MethodResult) -> str:
    """For a method ranked by magnitude that also has a signed score: how many of its top reading_k words its own
    signed score puts against the answer (deleting those raises the answer's probability, which is why a magnitude
    ranking can look worse than random). Empty where there are none, or no signed score to tell."""
    signed = comparison.methods.get(f"{result.method}:signed")
    if result.ranked_by != "magnitude" or signed is None:
        return ""
    k = reading_k(comparison)
    top = result.deletions[0].ranking[:k]
    against = [comparison.words[i].text for i in top if signed.word_scores[0][i] < 0]
    if not against:
        return ""
    return (f"{len(against)} of its top-{k} words ({', '.join(against)}) speak against the answer by its own signed "
            "score: deleting them helps the answer.")


def _single(result: MethodResult, values: dict, versus: VersusRandom) -> EntryFaithfulness:
    """A compared entry's fields: its one draw of each summary (naopc only where AOPC's bounds were searched)."""
    def first(draws: np.ndarray):
        return draws[0].tolist()

    return EntryFaithfulness(
        method=result.method, ranked_by=result.ranked_by, ranked_by_description=RANKINGS[result.ranked_by],
        label=entry_label(result.name), description=result.description, scores=result.scores[0].tolist(),
        word_scores=result.word_scores[0].tolist(), ranking=list(result.deletions[0].ranking),
        deletion=_curve(values["deletion"], first), deletion_by_fraction=_curve(values["deletion_by_fraction"], first),
        summaries={name: None if draws is None else float(draws[0]) for name, draws in values["summaries"].items()},
        versus_random=versus)


def _spread(result: MethodResult, values: dict) -> RandomFaithfulness:
    """Random's fields: mean, std, min and max over the draws (of a flip: the share of draws whose answer moved),
    and each draw's summaries (naopc only where AOPC's bounds were searched)."""
    def summary(draws: np.ndarray) -> Spread:
        return Spread.from_dict({**spread(draws), "draws": draws.tolist()})

    return RandomFaithfulness(
        description=result.description, scores=[s.tolist() for s in result.scores],
        rankings=[list(d.ranking) for d in result.deletions],
        deletion=_curve(values["deletion"], spread), deletion_by_fraction=_curve(values["deletion_by_fraction"], spread),
        summaries={name: None if draws is None else summary(draws) for name, draws in values["summaries"].items()})


def _curve(curve: dict, summary) -> DeletionCurve:
    """A curve's axes (lists) as they are, its measures (arrays: draws × points) through summary."""
    return DeletionCurve.from_dict({name: summary(values) if isinstance(values, np.ndarray) else values
                                    for name, values in curve.items()})
