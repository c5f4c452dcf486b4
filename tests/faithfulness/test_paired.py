"""Paired comparisons of methods over questions, and the verdict sentence they allow: differences and their
intervals against scipy's bootstrap and binomial test, and the sentence read against the numbers it quotes."""
import re

import numpy as np
import pytest
from scipy import stats

from rcqa.faithfulness.paired import MIN_QUESTIONS, paired_difference, paired_differences, verdict


def label(name):
    return name.upper()


def test_the_difference_is_the_mean_of_per_question_differences_with_a_paired_bootstrap_interval():
    a = np.array([0.5, 0.4, 0.6, 0.3, 0.7, 0.5, 0.45, 0.55, 0.65, 0.35, 0.5, np.nan])
    b = np.array([0.1, 0.2, 0.1, 0.3, 0.0, 0.2, 0.15, 0.25, 0.05, 0.1, np.nan, 0.2])
    found = paired_difference("a", "b", "aopc", a, b, seed=3)
    both = ~(np.isnan(a) | np.isnan(b))
    d = a[both] - b[both]  # 10 questions: the last two are each undefined for one method
    assert found.n == 10 and found.mean == pytest.approx(d.mean())
    reference = stats.bootstrap((d,), np.mean, confidence_level=0.95, n_resamples=2000, method="percentile",
                                rng=np.random.default_rng(3)).confidence_interval
    assert (found.low, found.high) == pytest.approx((reference.low, reference.high))
    assert (found.a_ahead, found.b_ahead, found.level) == (9, 0, 1)  # the fourth question is level (0.3 − 0.3)
    assert found.sign_test_p == pytest.approx(stats.binomtest(9, 9).pvalue) == pytest.approx(2 / 2 ** 9)
    assert found.told_apart and found.better() == "a"


def test_for_sufficiency_lower_is_better():
    low, high = np.linspace(0.0, 0.1, 12), np.linspace(0.5, 0.6, 12)
    assert paired_difference("a", "b", "sufficiency", low, high).better() == "a"
    assert paired_difference("a", "b", "aopc", low, high).better() == "b"


def test_an_interval_covering_zero_or_too_few_questions_tells_nothing_apart():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 1, 40)
    level = paired_difference("a", "b", "aopc", noise, -noise[::-1])
    assert level.low < 0 < level.high and not level.told_apart and level.better() is None
    few = paired_difference("a", "b", "aopc", np.ones(MIN_QUESTIONS - 1), np.zeros(MIN_QUESTIONS - 1))
    assert few.mean == 1 and few.low is None and not few.told_apart


def values(**per_entry):
    return {name: {"aopc": np.asarray(v, float), "comprehensiveness": np.asarray(v, float),
                   "sufficiency": -np.asarray(v, float)} for name, v in per_entry.items()}


def test_the_verdict_names_the_best_those_it_is_not_told_apart_from_and_random():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.2, 0.4, 30)
    found = values(x=base + 0.2, y=base + 0.2 + rng.normal(0, 0.05, 30), z=base + 0.05, random=base)
    paired = paired_differences(found)
    means = {name: float(v["aopc"].mean()) for name, v in found.items()}
    sentence = verdict(paired, means, label)
    best = max(("x", "y", "z"), key=means.get)
    other = "y" if best == "x" else "x"
    assert sentence.startswith(f"By AOPC over 30 questions, {label(best)} finds the most")
    assert f"not told apart from {label(other)}" in sentence and "ahead of Z by" in sentence
    # every number the sentence quotes is the paired table's
    pair = next(p for p in paired["aopc"] if {p["a"], p["b"]} == {best, "z"})
    sign = 1 if pair["a"] == best else -1
    assert f"{sign * pair['mean']:+.3f}" in sentence
    quoted = re.search(r"Z by ([+-][0-9.]+) \[([+-][0-9.]+), ([+-][0-9.]+)\]", sentence).groups()
    assert sorted(float(q) for q in quoted[1:]) == pytest.approx(sorted([sign * pair["low"], sign * pair["high"]]),
                                                                 abs=5e-4)
    assert sentence.endswith("X, Y and Z find more than random deletion.")


def test_on_one_question_the_verdict_says_nothing_is_told_apart():
    found = values(x=[0.5], y=[0.1], random=[0.2])
    sentence = verdict(paired_differences(found), {"x": 0.5, "y": 0.1, "random": 0.2}, label)
    assert sentence.startswith("On 1 question no two methods are told apart") and "X has the highest AOPC (0.500)" in sentence


def test_ahead_of_every_other_method_quotes_the_closest():
    rng = np.random.default_rng(2)
    base = rng.uniform(0.2, 0.4, 30)
    found = values(x=base + 0.5, y=base + 0.3, z=base + 0.1)
    sentence = verdict(paired_differences(found), {n: float(v["aopc"].mean()) for n, v in found.items()}, label)
    assert "; ahead of every other method, the closest Y, by +0.200 [+0.200, +0.200]." in sentence


def test_against_random_many_ahead_are_counted_and_the_exceptions_named():
    rng = np.random.default_rng(4)
    base = rng.uniform(0.2, 0.4, 30)
    found = values(a=base + 0.5, b=base + 0.4, c=base + 0.3, d=base + 0.2, e=base + rng.normal(0, 0.05, 30),
                   random=base)
    sentence = verdict(paired_differences(found), {n: float(v["aopc"].mean()) for n, v in found.items()}, label)
    assert sentence.endswith("4 of the 5 methods find more than random deletion; E is not told apart from random.")
