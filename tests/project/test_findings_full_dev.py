"""docs/findings.md's section on all of SQuAD v1.1 dev with AttnLRP, read back from the committed run's own rows.

Every number is recomputed here with numpy and scipy, not with rcqa: the first and last third of the layers as
numpy's array_split cuts 7 layers (3, 2, 2); each question's mean over a third; 95 % percentile bootstraps (2,000
resamples, seeded). A change from the first third to the last is the per-question change, bootstrapped (paired);
the first 1,000 questions against the other 9,570 is a two-sample bootstrap of the difference of their means
(unpaired: different questions). A quoted number must equal the recomputed one to the digits quoted, and a
comparison says "not told apart" exactly where its interval covers 0."""
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "reports" / "runs" / "squad-dev-full-attnlrp"
FIRST_1000 = ROOT / "reports" / "plausibility" / "squad-dev-1000-attnlrp"  # the first 1,000 questions, their ids
FINDINGS = ROOT / "docs" / "findings.md"
HEADING = "## All of SQuAD dev: AttnLRP over 10,570 questions"
MINUS = "\u2212"


@cache
def table():
    return pq.read_table(RUN / "shards").sort_by("id")


@cache
def first_ids() -> frozenset[str]:
    return frozenset(pq.read_table(FIRST_1000 / "shards", columns=["id"]).column("id").to_pylist())


def column(name: str) -> list:
    return table().column(name).to_pylist()


def per_layer(name: str) -> np.ndarray:
    """questions × layers of a per-layer column (NaN where a question defines no value)."""
    values = column(name)
    width = max(len(v) for v in values if v is not None)
    return np.array([[np.nan if x is None else x for x in v] if v is not None else [np.nan] * width
                     for v in values], dtype=float)


def thirds(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Each question's mean over the first and over the last third of the layers (NaN where it defines none)."""
    values = per_layer(name)
    first, _, last = np.array_split(np.arange(values.shape[1]), 3)
    with np.errstate(invalid="ignore"):
        return tuple(np.array([np.nanmean(row) if (~np.isnan(row)).any() else np.nan for row in values[:, part]])
                     for part in (first, last))


def bootstrap(*samples: np.ndarray) -> tuple[float, float, float]:
    """The mean (two samples: the difference of their means) of the defined values, and its 95 % interval."""
    samples = tuple(np.asarray(s, dtype=float)[~np.isnan(s)] for s in samples)

    def statistic(*drawn, axis=-1):
        return drawn[0].mean(axis=axis) - (drawn[1].mean(axis=axis) if len(drawn) > 1 else 0)

    found = stats.bootstrap(samples, statistic, confidence_level=0.95, n_resamples=2000, method="percentile",
                            rng=np.random.default_rng(0)).confidence_interval
    return float(statistic(*samples)), float(found.low), float(found.high)


def mask(kind: str) -> np.ndarray:
    if kind == "quantifier":
        return np.array(column("is_quantifier"), dtype=bool)
    return np.array([i in first_ids() for i in column("id")], dtype=bool)


def section() -> str:
    text = FINDINGS.read_text()
    start = text.index(HEADING)
    end = text.find("\n## ", start + 1)
    return " ".join(text[start:end if end > 0 else None].replace(MINUS, "-").split())  # lines wrap anywhere


def says(*phrases: str) -> None:
    found = section()
    for phrase in phrases:
        assert phrase in found, phrase


def interval_text(found: tuple[float, float, float], digits: int = 1, signed: bool = True) -> str:
    value, low, high = found
    form = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    return f"{form.format(value)} [{form.format(low)}, {form.format(high)}]"


def told(found: tuple[float, float, float]) -> str:
    return "not told apart" if found[1] <= 0 <= found[2] else "told apart"


# --------------------------------------------------------------------------------------------------------- the run

def test_the_run_holds_every_dev_question_once_none_failed_and_is_light():
    ids = column("id")
    assert len(ids) == len(set(ids)) == 10_570
    assert first_ids() <= set(ids) and len(first_ids()) == 1_000
    assert sum(path.stat().st_size for path in (RUN / "shards").glob("*.parquet")) < 40e6
    says("10,570 questions", f"EM {100 * np.mean(column('em')):.1f}, F1 {100 * np.mean(column('f1')):.1f}")


@pytest.mark.parametrize("name, label", [("category_query", "query"), ("category_supporting", "supporting"),
                                         ("answer_attribution", "answer's share of the attribution")])
def test_each_share_from_the_first_third_to_the_last_with_its_paired_change(name, label):
    early, late = thirds(name)
    both = ~np.isnan(early) & ~np.isnan(late)
    change = bootstrap(late[both] - early[both])
    says(f"{label}: {np.nanmean(early[both]):.1f} % → {np.nanmean(late[both]):.1f} %, "
         f"{interval_text(change)} points")


def test_the_quantifier_questions_number_share_rises_as_the_paper_says():
    quantifier = mask("quantifier")
    early, late = (part[quantifier] for part in thirds("quantifier_share"))
    both = ~np.isnan(early) & ~np.isnan(late)
    change = bootstrap(late[both] - early[both])
    says(f"{int(quantifier.sum())} quantifier questions", f"{int(both.sum())} with two or more numbers",
         f"passage's numbers in the top-5: {np.mean(early[both]):.1f} % → {np.mean(late[both]):.1f} %, "
         f"{interval_text(change)} points",
         f"EM {100 * np.mean(np.array(column('em'))[quantifier]):.1f}")
    layers = per_layer("quantifier_share")[quantifier][both]
    says(f"{layers[:, -2].mean():.1f} % at block 4", f"{layers[:, -1].mean():.1f} % at block 5")


def test_the_layers_agreement_beyond_their_top_words_is_read_off_the_mean_jsd():
    """The report's claim compares the largest mean JSD between two layers with the top-5 removed and kept."""
    def matrices(name: str) -> np.ndarray:
        return np.array([[[np.nan if x is None else x for x in row] for row in m] for m in column(name)], dtype=float)

    def largest(name: str) -> float:
        """Over the pairs of layers some question defines (a layer's distribution may be undefined)."""
        values = matrices(name)
        defined = (~np.isnan(values)).any(axis=0) & ~np.eye(values.shape[1], dtype=bool)
        return float(np.nanmean(values[:, defined], axis=0).max())

    removed, kept = largest("jsd_topk_removed"), largest("jsd_topk_kept")
    # the QA head reads each token alone, so AttnLRP's relevance at block 5 sits on the span's first and last tokens
    assert np.isnan(matrices("jsd_topk_removed")[:, -1, :]).all()
    says("block 5 left out")
    verdict = "does not hold" if removed >= kept else "holds"
    says(f"agree beyond their top words: {verdict}", f"top-5 removed {removed:.3f} against kept {kept:.3f}")


@pytest.mark.parametrize("name, label, rows", [("category_query", "query", None),
                                               ("answer_attribution", "answer's share of the attribution", None),
                                               ("quantifier_share", "numbers' share", "quantifier")])
def test_the_first_1000_against_the_rest_says_what_its_interval_allows(name, label, rows):
    early, late = thirds(name)
    change = late - early
    chosen = np.ones(len(change), dtype=bool) if rows is None else mask(rows)
    first = mask("first")
    found = bootstrap(change[chosen & first], change[chosen & ~first])
    says(f"{label} change, first 1,000 less the rest: {interval_text(found)} points, {told(found)}")


# ------------------------------------------------------------------- IG against AttnLRP, question by question

PLAUSIBILITY = ROOT / "reports" / "plausibility"
PAIRED_CLAIMS = [("category_query", "the question's words' share of the top-5", False),
                 ("category_supporting", "the supporting words' share of the top-5", False),
                 ("answer_attribution", "the answer's share of the attribution", False),
                 ("quantifier_share", "the passage's numbers' share of the top-5 (quantifier questions)", True)]


@cache
def first_1000(method: str) -> dict[str, dict]:
    """The first 1,000's run of a method, by question id."""
    rows = pq.read_table(PLAUSIBILITY / f"squad-dev-1000-{method}" / "shards").to_pylist()
    return {row["id"]: row for row in rows}


def change_by_question(method: str, name: str, ids: list[str]) -> np.ndarray:
    """Each question's mean over the last third of the layers less its mean over the first (3, 2, 2 of 7)."""
    found = []
    for question in ids:
        values = np.array([np.nan if x is None else x for x in first_1000(method)[question][name] or [np.nan] * 7])
        first, last = values[:3][~np.isnan(values[:3])], values[5:][~np.isnan(values[5:])]
        found.append(last.mean() - first.mean() if first.size and last.size else np.nan)
    return np.array(found)


@pytest.mark.parametrize("name, label, quantifier_only", PAIRED_CLAIMS)
def test_ig_against_attnlrp_question_by_question_says_what_its_intervals_allow(name, label, quantifier_only):
    ids = sorted(first_1000("ig"))
    assert ids == sorted(first_1000("attnlrp"))  # the same 1,000 questions
    if quantifier_only:
        ids = [question for question in ids if first_1000("ig")[question]["is_quantifier"]]
    ig, attnlrp = change_by_question("ig", name, ids), change_by_question("attnlrp", name, ids)
    both = ~np.isnan(ig) & ~np.isnan(attnlrp)
    found = {method: bootstrap(values[both]) for method, values in (("IG", ig), ("AttnLRP", attnlrp))}
    difference = bootstrap(ig[both] - attnlrp[both])

    def way(interval):
        return "not told apart from no change" if interval[1] <= 0 <= interval[2] else (
            "rises" if interval[1] > 0 else "falls")

    ways = {method: way(interval) for method, interval in found.items()}
    assert ways["IG"] == ways["AttnLRP"] != "not told apart from no change"  # the heading's "the same story"
    assert told(difference) == "told apart"  # the heading's "in different sizes"
    says(f"{label} {ways['IG']} under IG ({interval_text(found['IG'])} points) and {ways['AttnLRP']} under AttnLRP "
         f"({interval_text(found['AttnLRP'])} points), over {int(both.sum()):,} questions: the same story; IG's change "
         f"less AttnLRP's: {interval_text(difference)} points, told apart",
         "IG against AttnLRP, question by question: the same story, in different sizes")
