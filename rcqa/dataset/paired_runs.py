"""Two runs over the same questions (say IG and AttnLRP over SQuAD dev), read question by question.

For each of the paper's layer-role claims, each run's change from the first third of the layers to the last (each
question's mean over a third, as numpy's array_split cuts the layers; the change is the last's less the first's),
and the difference of the two runs' changes, paired by question: each with its 95 % bootstrap interval
(rcqa.intervals). Whether the runs tell the same story is read from their two intervals by the house's one rule
(rcqa.intervals.excludes_zero): a change whose interval excludes 0 rises or falls, any other is "not told apart
from no change"; the same story is the same direction in both."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rcqa.dataset.aggregate import per_layer
from rcqa.intervals import excludes_zero, mean_with_interval


@dataclass(frozen=True)
class Claim:
    """One layer-role claim: the per-layer column it reads, how it is said, and the rows it is asked of."""

    name: str
    column: str
    label: str
    quantifier_only: bool = False  # asked of the quantifier questions with two or more numbers only


CLAIMS = (
    Claim("query", "category_query", "the question's words' share of the top-5"),
    Claim("supporting", "category_supporting", "the supporting words' share of the top-5"),
    Claim("answer", "answer_attribution", "the answer's share of the attribution"),
    Claim("numbers", "quantifier_share", "the passage's numbers' share of the top-5 (quantifier questions)",
          quantifier_only=True),
)


def thirds_change(values: np.ndarray) -> np.ndarray:
    """Per question (rows of questions × layers, NaN where undefined): the mean of the last third of the layers
    less the mean of the first; NaN where either third defines no value."""
    first, _, last = np.array_split(np.arange(values.shape[1]), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a third a question defines nowhere is NaN, as meant
        return np.nanmean(values[:, last], axis=1) - np.nanmean(values[:, first], axis=1)


def direction(found: dict) -> int:
    """+1 where the interval lies above 0, −1 below, 0 where it covers 0 (or there is none)."""
    if not excludes_zero(found["low"], found["high"]):
        return 0
    return 1 if found["low"] > 0 else -1


def story(first: dict, second: dict) -> str:
    """"same" where both change the same way, "opposite" where they change in opposite ways, "neither" where
    neither is told apart from no change, "one" where only one is."""
    a, b = direction(first), direction(second)
    if a == b:
        return "same" if a else "neither"
    return "opposite" if a * b < 0 else "one"


def compare_runs(first: pa.Table, second: pa.Table, seed: int = 0) -> dict | None:
    """Each claim's change in either run and the first's less the second's, over the questions both runs hold
    (matched by id; a question either run cannot read is left out of that claim); None where they share fewer
    than two questions."""
    shared = sorted(set(first.column("id").to_pylist()) & set(second.column("id").to_pylist()))
    if len(shared) < 2:
        return None
    a, b = (_rows_of(rows, shared) for rows in (first, second))
    claims = {}
    for claim in CLAIMS:
        if claim.column not in a.column_names or claim.column not in b.column_names:
            continue
        # the questions both runs give a value, so that per_layer, which drops the others, keeps the pairs aligned
        chosen = pc.and_(pc.is_valid(a[claim.column]), pc.is_valid(b[claim.column]))
        if claim.quantifier_only:
            chosen = pc.and_(chosen, a["is_quantifier"])
        changes = [thirds_change(per_layer(rows.filter(chosen), claim.column, n_layers=0)) for rows in (a, b)]
        kept = ~np.isnan(changes[0]) & ~np.isnan(changes[1])
        each = [mean_with_interval(change[kept], seed) for change in changes]
        claims[claim.name] = {"first": each[0], "second": each[1],
                              "difference": mean_with_interval(changes[0][kept] - changes[1][kept], seed),
                              "n": int(kept.sum()), "story": story(*each)}
    return {"questions": len(shared), "claims": claims}


def _rows_of(rows: pa.Table, ids: list[str]) -> pa.Table:
    """The rows of `ids`, in their order (a run holds each id once)."""
    where = {question: index for index, question in enumerate(rows.column("id").to_pylist())}
    return rows.take([where[question] for question in ids])


def _interval(found: dict) -> str:
    return f"{found['mean']:+.1f} [{found['low']:+.1f}, {found['high']:+.1f}]".replace("-", "\u2212")


def _way(found: dict) -> str:
    return {1: "rises", -1: "falls", 0: "is not told apart from no change"}[direction(found)]


STORIES = {"same": "the same story", "opposite": "opposite stories", "neither": "the same story (no change in either)",
           "one": "different stories"}


def statements(found: dict, first: str, second: str) -> list[str]:
    """One sentence a claim, read from `found` (compare_runs): how the share moves under each run, with the
    intervals, the story, and whether the sizes of the two changes are told apart."""
    said = []
    for claim in CLAIMS:
        if claim.name not in found["claims"]:
            continue
        numbers = found["claims"][claim.name]
        if numbers["n"] < 2:
            continue
        a, b, difference = numbers["first"], numbers["second"], numbers["difference"]
        size = "told apart" if excludes_zero(difference["low"], difference["high"]) else "not told apart"
        said.append(f"From the first third of the layers to the last, {claim.label} {_way(a)} under {first} "
                    f"({_interval(a)} points) and {_way(b)} under {second} ({_interval(b)} points), over "
                    f"{numbers['n']:,} questions: {STORIES[numbers['story']]}; {first}'s change less {second}'s: "
                    f"{_interval(difference)} points, {size}.")
    return said
