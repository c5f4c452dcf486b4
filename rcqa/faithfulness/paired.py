"""Which method finds more of what the answer rests on: paired comparisons over questions, and the verdict they allow.

Every entry (a method under one ranking, or random: the mean of its draws) has one value per question of each
summary measure. Two entries are compared on the questions both define, by the per-question differences: their
mean with a 95 % percentile-bootstrap interval (questions resampled, so the pairing is kept), and a two-sided sign
test on how often each is ahead. One rule for every pair: A is told apart from B only where the interval excludes 0;
otherwise the two are "not told apart". Below MIN_QUESTIONS no interval is drawn (a percentile bootstrap over a
handful of questions covers far less than it claims), so no verdict ranks anything there.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

import numpy as np
from scipy.stats import binomtest

from rcqa.faithfulness.summaries import SUMMARIES
from rcqa.intervals import excludes_zero, mean_with_interval

VERDICT_MEASURE = "aopc"  # the measure a verdict ranks the entries by unless told another
# the measures compared (the registered summaries compared pair by pair; the verdict's first, as the files have always
# held them), and whether more of them means more faithful
MEASURES = {name: SUMMARIES[name].higher_is_better
            for name in sorted((n for n, s in SUMMARIES.items() if s.paired), key=lambda n: n != VERDICT_MEASURE)}
MIN_QUESTIONS = 10
RANDOM = "random"


@dataclass(frozen=True)
class PairedDifference:
    """A − B on one measure over the questions both define: the mean difference, its interval (None below
    MIN_QUESTIONS), and how often A is ahead, behind or level, with the sign test's two-sided p (ties dropped)."""

    a: str
    b: str
    measure: str
    n: int
    mean: float | None
    low: float | None
    high: float | None
    a_ahead: int
    b_ahead: int
    level: int
    sign_test_p: float | None

    @property
    def told_apart(self) -> bool:
        return excludes_zero(self.low, self.high)

    def better(self) -> str | None:
        """The entry that is more faithful by this measure, where the interval tells them apart."""
        if not self.told_apart:
            return None
        assert self.low is not None  # told apart: the interval is there
        a_higher = self.low > 0
        return self.a if a_higher == MEASURES[self.measure] else self.b

    def to_dict(self) -> dict:
        return {**asdict(self), "told_apart": self.told_apart, "better": self.better()}


def paired_difference(a: str, b: str, measure: str, first: np.ndarray, second: np.ndarray,
                      seed: int = 0) -> PairedDifference:
    """A's values minus B's, question by question (NaN where either is undefined: that question is left out)."""
    both = ~(np.isnan(first) | np.isnan(second))
    differences = np.asarray(first, dtype=float)[both] - np.asarray(second, dtype=float)[both]
    found = mean_with_interval(differences, seed) if differences.size else {"mean": None, "low": None, "high": None}
    ahead, behind = int((differences > 0).sum()), int((differences < 0).sum())
    low, high = (found["low"], found["high"]) if differences.size >= MIN_QUESTIONS else (None, None)
    return PairedDifference(a, b, measure, int(differences.size), found["mean"], low, high, ahead, behind,
                            int(differences.size) - ahead - behind,
                            float(binomtest(ahead, ahead + behind).pvalue) if ahead + behind else None)


def paired_differences(values: Mapping[str, Mapping[str, np.ndarray]], seed: int = 0) -> dict[str, list[dict]]:
    """Per measure, every pair of entries (in the order given, random last) as PairedDifference dictionaries.
    `values`: entry → measure → per-question values; a measure not every entry holds (a summary its comparisons did
    not compute) is left out."""
    names = [*(n for n in values if n != RANDOM), *([RANDOM] if RANDOM in values else [])]
    return {measure: [paired_difference(a, b, measure, np.asarray(values[a][measure], dtype=float),
                                        np.asarray(values[b][measure], dtype=float), seed).to_dict()
                      for a, b in itertools.combinations(names, 2)]
            for measure in MEASURES if all(measure in found for found in values.values())}


def verdict(paired: Mapping[str, list[dict]], means: Mapping[str, float], label: Callable[[str], str],
            measure: str = VERDICT_MEASURE) -> str:
    """The sentence a comparison opens with, read from the paired differences of one measure: the entry with the
    best mean, those it is not told apart from, those it beats, and how the entries fare against random."""
    pairs = paired[measure]
    n = max((pair["n"] for pair in pairs), default=0)
    compared = [name for name in means if name != RANDOM]
    if not compared:
        return "No method was compared."
    higher = MEASURES[measure]
    best = max(compared, key=lambda name: means[name] if higher else -means[name])
    shown = SUMMARIES[measure].label
    if n < MIN_QUESTIONS:
        return (f"On {n} question{'s' * (n != 1)} no two methods are told apart: a paired interval needs at least "
                f"{MIN_QUESTIONS} questions. Here {label(best)} has the {'highest' if higher else 'lowest'} {shown} "
                f"({means[best]:.3f}); run the comparison over a dataset to tell the methods apart.")
    between = {frozenset((p["a"], p["b"])): p for p in pairs}
    rivals = [name for name in compared if name != best]
    tied = [name for name in rivals if not between[frozenset((best, name))]["told_apart"]]
    beaten = [name for name in rivals if between[frozenset((best, name))]["better"] == best]
    sentence = (f"By {shown} over {n} questions, {label(best)} finds the most of what the answer rests on "
                f"({means[best]:.3f})")
    if tied:
        sentence += f"; not told apart from {_listed([f'{label(t)} ({_difference(between, best, t)})' for t in tied])}"
    if beaten:  # the closest one beaten is what the claim rests on; the rest are further behind
        closest = min(beaten, key=lambda name: abs(between[frozenset((best, name))]["mean"]))
        others = ("every other method" if len(beaten) == len(rivals) > 1 else f"{len(beaten)} others"
                  if len(beaten) > 1 else label(closest))
        sentence += (f"; ahead of {others}" + (f", the closest {label(closest)}," if len(beaten) > 1 else "")
                     + f" by {_difference(between, best, closest)}")
    return f"{sentence}. {_against_random(between, compared, label)}" if RANDOM in means else f"{sentence}."


def _against_random(between: Mapping[frozenset, dict], compared: list[str], label: Callable[[str], str]) -> str:
    groups: dict[str, list[str]] = {"ahead": [], "level": [], "behind": []}
    for name in compared:
        pair = between[frozenset((name, RANDOM))]
        groups["level" if not pair["told_apart"] else "ahead" if pair["better"] == name else "behind"].append(name)
    parts = []
    if groups["ahead"]:  # named where few; counted where most are, the exceptions being named after
        ahead = (_listed([label(n) for n in groups["ahead"]]) if len(groups["ahead"]) <= 3 else
                 f"{'All' if len(groups['ahead']) == len(compared) else len(groups['ahead'])} of the "
                 f"{len(compared)} methods")
        parts.append(f"{ahead} find{'s' * (len(groups['ahead']) == 1)} more than random deletion")
    if groups["level"]:
        parts.append(f"{_listed([label(n) for n in groups['level']])} "
                     f"{'is' if len(groups['level']) == 1 else 'are'} not told apart from random")
    if groups["behind"]:
        parts.append(f"{_listed([label(n) for n in groups['behind']])} find{'s' * (len(groups['behind']) == 1)} "
                     "less than random deletion")
    return "; ".join(parts).capitalize()[:1] + "; ".join(parts)[1:] + "."


def _difference(between: Mapping[frozenset, dict], a: str, b: str) -> str:
    """A − B as the sentence quotes it: the mean difference and its interval, signed from A's side."""
    pair = between[frozenset((a, b))]
    sign = 1 if pair["a"] == a else -1
    low, high = sorted((sign * pair["low"], sign * pair["high"]))
    return f"{sign * pair['mean']:+.3f} [{low:+.3f}, {high:+.3f}]"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
