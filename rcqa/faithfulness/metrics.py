"""Faithfulness numbers from span probabilities: area over the deletion curve, ERASER's comprehensiveness and
sufficiency, the spread of random draws, the methods' rank agreement, and a plain-words reading of a curve.

Pure numbers in, numbers (or a sentence) out, so that each can be checked by hand.
"""
from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import ConstantInputWarning, kendalltau, spearmanr


def aopc(original: float, probabilities: np.ndarray) -> float:
    """Area over the perturbation curve (Samek et al., 2017): 1/(K+1) Σ_{k=0..K} (p(x) − p(x without its top-k
    words)), `probabilities` running over k = 0..K (its k = 0 term is 0 when nothing is deleted)."""
    return float(np.mean(original - np.asarray(probabilities, dtype=np.float64)))


def normalised_aopc(value: float, lower: float, upper: float) -> float | None:
    """Normalised AOPC (Edin et al., ACL 2025, "Normalized AOPC", NAOPC): (AOPC − lower) / (upper − lower), the
    bounds being the least and the greatest AOPC any ordering of the same features reaches on this input. 0 is the
    worst ordering, 1 the best, whatever the model; None when every ordering has one AOPC. The paper averages the
    curve over k = 1..N; the k = 0 term here is 0 and the 1/(K+1) against 1/K scales the AOPC and both bounds alike,
    so the quotient is the paper's."""
    return (value - lower) / (upper - lower) if upper > lower else None


SetProbabilities = Callable[[list[frozenset]], Sequence[float]]  # the span's probability with each set deleted


def aopc_bounds(original: float, probabilities: SetProbabilities, features: Sequence[int], k: int,
                beam: int) -> tuple[float, float]:
    """The least and the greatest AOPC over k = 0..k of any ordering of `features`, by Edin et al.'s beam search
    (NAOPC_beam): each of the `beam` best prefixes (by their summed drops) is extended by every feature not in it, in
    both directions at once, and the `beam` best of each direction are kept. Exact when the beam holds every
    prefix; otherwise the lower bound may be too high and the upper too low (a bound found is always reached by
    some ordering). `probabilities` answers a batch of deleted sets (asked once per distinct set)."""
    k = min(k, len(features))
    lowest: list[tuple[tuple[int, ...], float]] = [((), 0.0)]
    highest: list[tuple[tuple[int, ...], float]] = [((), 0.0)]
    for _ in range(k):
        grown = {direction: [(prefix + (f,), total) for prefix, total in beams for f in features if f not in prefix]
                 for direction, beams in (("low", lowest), ("high", highest))}
        sets = list(dict.fromkeys(frozenset(prefix) for found in grown.values() for prefix, _ in found))
        drop = dict(zip(sets, (original - float(p) for p in probabilities(sets))))
        scored = {direction: [(prefix, total + drop[frozenset(prefix)]) for prefix, total in found]
                  for direction, found in grown.items()}
        lowest = sorted(scored["low"], key=lambda pair: pair[1])[:beam]
        highest = sorted(scored["high"], key=lambda pair: -pair[1])[:beam]
    return lowest[0][1] / (k + 1), highest[0][1] / (k + 1)


def comprehensiveness(original: float, without_top: np.ndarray) -> float:
    """ERASER's comprehensiveness (DeYoung et al., ACL 2020, §4.2): m(x)_j − m(x \\ r)_j, how much the model's
    score for its prediction j falls when the rationale r is deleted. For soft scores ERASER takes r as the top
    k % of the tokens for k in the bins B = {1, 5, 10, 20, 50} and averages over the bins (their AOPC, computed
    so in the released rationale_benchmark/metrics.py). Here m is the explained span's probability and
    `without_top` holds m with the top words of each bin deleted."""
    return float(np.mean(original - np.asarray(without_top, dtype=np.float64)))


def sufficiency(original: float, only_top: np.ndarray) -> float:
    """ERASER's sufficiency (same paper and bins): m(x)_j − m(r)_j, how much the score falls when only the rationale
    is kept; lower is better (the rationale alone suffices). `only_top` holds m with every passage word deleted
    but the top words of each bin (the question and the special tokens are always kept)."""
    return float(np.mean(original - np.asarray(only_top, dtype=np.float64)))


def fraction_count(fraction: float, words: int) -> int:
    """Words in `fraction` of a passage of `words` words: rounded up, so every bin deletes at least one word
    (rounded first to 9 decimals, so that 0.07 × 100 is 7, not 8)."""
    return min(words, math.ceil(round(fraction * words, 9)))


def spread(draws: np.ndarray) -> dict:
    """Mean, standard deviation (ddof 1) and range over the first axis (the random draws), as JSON lists."""
    draws = np.asarray(draws, dtype=np.float64)
    std = draws.std(axis=0, ddof=1) if len(draws) > 1 else np.zeros_like(draws[0])
    return {"mean": _plain(draws.mean(axis=0)), "std": _plain(std), "min": _plain(draws.min(axis=0)),
            "max": _plain(draws.max(axis=0))}


def _plain(values: np.ndarray):
    return values.tolist() if np.ndim(values) else float(values)


def rank_correlations(word_scores: dict[str, np.ndarray]) -> dict:
    """Spearman's ρ and Kendall's τ (b) between every two methods' word scores: do they rank the words alike?
    A method whose scores are all equal ranks nothing: its correlations are None."""
    names = list(word_scores)
    matrices = {"spearman": np.eye(len(names)), "kendall": np.eye(len(names))}
    for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
        for kind, test in (("spearman", spearmanr), ("kendall", kendalltau)):
            value = rank_correlation(word_scores[a], word_scores[b], test)
            matrices[kind][i, j] = matrices[kind][j, i] = math.nan if value is None else value
    return {"methods": names, **{kind: [[None if math.isnan(v) else v for v in row] for row in matrix.tolist()]
                                  for kind, matrix in matrices.items()}}


def rank_correlation(a: np.ndarray, b: np.ndarray, test: Callable = spearmanr) -> float | None:
    """Spearman's ρ (or another scipy rank test's statistic) between two score vectors; None where either ranks
    nothing (all its scores equal)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)  # its NaN is the None
        value = float(test(a, b).statistic)
    return None if math.isnan(value) else value


def drop_ratio(original: float, method: float, random: float) -> float | None:
    """How many times the method's deletion lowers the probability more than random deletion does (None when random
    deletion does not lower it, where no ratio means anything)."""
    random_drop = original - random
    return (original - method) / random_drop if random_drop > 0 else None


def reading(k: int, original: float, method: float, random_draws: np.ndarray) -> str:
    """One sentence on what deleting a method's top-k words does to the answer's probability, against random
    deletion of k words (the mean and the range over the draws). Each probability is written with as many digits as
    it takes to tell the ones compared apart (never "from 68% to 68%")."""
    draws = np.asarray(random_draws, dtype=np.float64)
    mean, low, high = float(draws.mean()), float(draws.min()), float(draws.max())
    p0, pm, pr, plow, phigh = percents(original, method, mean, low, high)
    random_text = f"random deletion of {k} words takes it to {pr} on average over {len(draws)} draws"
    words = f"its top-{k} word{'s' * (k != 1)}"
    if method >= original:
        return f"Deleting {words} does not lower the answer's probability ({p0} → {pm}); {random_text}."
    ratio = drop_ratio(original, method, mean)
    change = f"Deleting {words} lowers the answer's probability from {p0} to {pm}"
    if ratio is None:
        return f"{change}, while random deletion does not lower it ({pr} on average over {len(draws)} draws)."
    verdict = ("lower than every random draw" if method < low else
               f"within the random draws' range ({plow}–{phigh}), so no better than random here")
    return f"{change}: {ratio:.1f}× the drop of random deletion ({random_text}); {verdict}."


def summary_reading(name: str, value: float, random_values: np.ndarray, higher_is_better: bool) -> str:
    """One sentence placing a method's summary number (comprehensiveness, sufficiency, AOPC) against random's draws of
    the same number, as the table lists them: above, below or within their range, and what that means."""
    draws = np.asarray(random_values, dtype=np.float64)
    low, high = float(draws.min()), float(draws.max())
    where = "above every" if value > high else "below every" if value < low else "within the range of the"
    better = value > high if higher_is_better else value < low
    worse = value < low if higher_is_better else value > high
    verdict = "better than random" if better else "worse than random" if worse else "no better than random"
    return (f"Its {name} is {value:.3f}, {where} random draw's ({low:.3f}–{high:.3f} over {len(draws)} draws): by "
            f"this measure, {verdict}.")


def percents(*probabilities: float) -> list[str]:
    """The probabilities as percentages with the fewest significant digits (2 to 5) at which the distinct ones read
    apart; under 0.01 % as such."""
    for digits in range(2, 6):
        shown = [_percent(p, digits) for p in probabilities]
        if len(set(shown)) == len(set(probabilities)):
            break
    return shown


def _percent(probability: float, digits: int = 2) -> str:
    """`digits` significant digits, so that small probabilities do not all read 0 %; under 0.01 % as such."""
    return "under 0.01%" if probability < 1e-4 else f"{100 * probability:.{digits}g}%"
