"""docs/findings.md's sections on all of SQuAD v1.1 dev, read back from the committed runs' rows.

Every number is recomputed here with numpy and scipy, not with rcqa: the first and last third of the layers as
numpy's array_split cuts 7 layers (3, 2, 2); each question's mean over a third; 95 % percentile bootstraps (2,000
resamples, seeded). A change from the first third to the last is the per-question change, bootstrapped (paired);
the first 1,000 questions against the other 9,570 is a two-sample bootstrap of the difference of their means
(unpaired: different questions). A quoted number must equal the recomputed one to the digits quoted, and a
comparison says "not told apart" exactly where its interval covers 0."""
import itertools
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = ROOT / "docs" / "findings.md"
PLAUSIBILITY = ROOT / "reports" / "plausibility"  # the first 1,000 questions' runs, one a method
MINUS = "\u2212"


@dataclass(frozen=True)
class FullDev:
    """A committed run over all of dev, and the findings section that quotes it."""

    method: str  # as the run folders name it
    label: str  # as the findings say it

    @property
    def run(self) -> Path:
        return ROOT / "reports" / "runs" / f"squad-dev-full-{self.method}"

    @property
    def heading(self) -> str:
        return f"## All of SQuAD dev: {self.label} over 10,570 questions"


ATTNLRP = FullDev("attnlrp", "AttnLRP")
IG = FullDev("ig", "IG")
RUNS = pytest.mark.parametrize("full", [ATTNLRP, IG], ids=lambda full: full.method)


@cache
def rows(folder: Path) -> dict[str, dict]:
    """A run's rows by question id."""
    return {row["id"]: row for row in pq.read_table(folder / "shards").to_pylist()}


@cache
def first_ids() -> frozenset[str]:
    return frozenset(rows(PLAUSIBILITY / "squad-dev-1000-attnlrp"))


def column(full: FullDev, name: str) -> list:
    found = rows(full.run)
    return [found[question][name] for question in sorted(found)]


def per_layer(full: FullDev, name: str) -> np.ndarray:
    """questions × layers of a per-layer column (NaN where a question defines no value)."""
    return as_layers(column(full, name))


def as_layers(values: list) -> np.ndarray:
    """Questions' per-layer values (None for a question or a layer without one) as questions × layers, NaN for None."""
    width = max(len(v) for v in values if v is not None)
    return np.array([[np.nan if x is None else x for x in v] if v is not None else [np.nan] * width
                     for v in values], dtype=float)


def thirds(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each question's mean over the first and over the last third of the layers (NaN where it defines none)."""
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


def mask(full: FullDev, kind: str) -> np.ndarray:
    if kind == "quantifier":
        return np.array(column(full, "is_quantifier"), dtype=bool)
    return np.array([i in first_ids() for i in sorted(rows(full.run))], dtype=bool)


def section(heading: str) -> str:
    text = FINDINGS.read_text()
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return " ".join(text[start:end if end > 0 else None].replace(MINUS, "-").split())  # lines wrap anywhere


def says(full: FullDev, *phrases: str) -> None:
    found = section(full.heading)
    for phrase in phrases:
        assert phrase in found, phrase


def interval_text(found: tuple[float, float, float], digits: int = 1, signed: bool = True) -> str:
    value, low, high = found
    form = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    return f"{form.format(value)} [{form.format(low)}, {form.format(high)}]"


def told(found: tuple[float, float, float]) -> str:
    return "not told apart" if found[1] <= 0 <= found[2] else "told apart"


def layer_name(index: int) -> str:
    return "embeddings" if index == 0 else f"block {index - 1}"


# --------------------------------------------------------------------------------------------------------- the run

@RUNS
def test_the_run_holds_every_dev_question_once_none_failed_and_is_light(full):
    table = pq.read_table(full.run / "shards", columns=["id"])
    assert table.num_rows == len(rows(full.run)) == 10_570  # each id once
    assert first_ids() <= set(rows(full.run)) and len(first_ids()) == 1_000
    assert sum(path.stat().st_size for path in (full.run / "shards").glob("*.parquet")) < 40e6
    says(full, "10,570 questions",
         f"EM {100 * np.mean(column(full, 'em')):.1f}, F1 {100 * np.mean(column(full, 'f1')):.1f}")


@RUNS
@pytest.mark.parametrize("name, label", [("category_query", "query"), ("category_supporting", "supporting"),
                                         ("answer_attribution", "answer's share of the attribution")])
def test_each_share_from_the_first_third_to_the_last_with_its_paired_change(full, name, label):
    early, late = thirds(per_layer(full, name))
    both = ~np.isnan(early) & ~np.isnan(late)
    change = bootstrap(late[both] - early[both])
    says(full, f"{label}: {np.nanmean(early[both]):.1f} % → {np.nanmean(late[both]):.1f} %, "
               f"{interval_text(change)} points")


@RUNS
def test_the_quantifier_questions_number_share_rises_as_the_paper_says(full):
    quantifier = mask(full, "quantifier")
    layers = per_layer(full, "quantifier_share")[quantifier]
    early, late = thirds(layers)
    both = ~np.isnan(early) & ~np.isnan(late)
    change = bootstrap(late[both] - early[both])
    says(full, f"{int(quantifier.sum())} quantifier questions", f"{int(both.sum())} with two or more numbers",
         f"passage's numbers in the top-5: {np.mean(early[both]):.1f} % → {np.mean(late[both]):.1f} %, "
         f"{interval_text(change)} points",
         f"EM {100 * np.mean(np.array(column(full, 'em'))[quantifier]):.1f}")
    peak = int(np.argmax(layers[both].mean(axis=0)))
    says(full, f"{layers[both][:, peak].mean():.1f} % at {layer_name(peak)}",
         f"{layers[both][:, -1].mean():.1f} % at block 5")


@RUNS
def test_the_layers_agreement_beyond_their_top_words_is_read_off_the_mean_jsd(full):
    """The report's claim compares the largest mean JSD between two layers with the top-5 removed and kept."""
    def matrices(name: str) -> np.ndarray:
        return np.array([[[np.nan if x is None else x for x in row] for row in m] for m in column(full, name)],
                        dtype=float)

    def largest(name: str) -> float:
        """Over the pairs of layers some question defines (a layer's distribution may be undefined)."""
        values = matrices(name)
        defined = (~np.isnan(values)).any(axis=0) & ~np.eye(values.shape[1], dtype=bool)
        return float(np.nanmean(values[:, defined], axis=0).max())

    removed, kept = largest("jsd_topk_removed"), largest("jsd_topk_kept")
    # a layer whose relevance all sits on its top-5 has nothing left once they are removed (AttnLRP's block 5: the QA
    # head reads each token alone, so its relevance sits on the span's first and last tokens); the section says so
    undefined = np.isnan(matrices("jsd_topk_removed")).all(axis=(0, 2))
    says(full, *(f"{layer_name(index)} left out" for index in np.flatnonzero(undefined)))
    verdict = "does not hold" if removed >= kept else "holds"
    says(full, f"agree beyond their top words: {verdict}", f"top-5 removed {removed:.3f} against kept {kept:.3f}")


@RUNS
@pytest.mark.parametrize("name, label, chosen", [("category_query", "query", None),
                                                 ("answer_attribution", "answer's share of the attribution", None),
                                                 ("quantifier_share", "numbers' share", "quantifier")])
def test_the_first_1000_against_the_rest_says_what_its_interval_allows(full, name, label, chosen):
    early, late = thirds(per_layer(full, name))
    change = late - early
    kept = np.ones(len(change), dtype=bool) if chosen is None else mask(full, chosen)
    first = mask(full, "first")
    found = bootstrap(change[kept & first], change[kept & ~first])
    says(full, f"{label} change, first 1,000 less the rest: {interval_text(found)} points, {told(found)}")


# ------------------------------------------------------------------- IG against AttnLRP, question by question

PAIRED_CLAIMS = [("category_query", "the question's words' share of the top-5", False),
                 ("category_supporting", "the supporting words' share of the top-5", False),
                 ("answer_attribution", "the answer's share of the attribution", False),
                 ("quantifier_share", "the passage's numbers' share of the top-5 (quantifier questions)", True)]
# a scope: its IG run, its AttnLRP run, and the findings section that compares them
SCOPES = {"first 1,000": (PLAUSIBILITY / "squad-dev-1000-ig", PLAUSIBILITY / "squad-dev-1000-attnlrp", ATTNLRP),
          "all of dev": (IG.run, ATTNLRP.run, IG)}


def change_by_question(folder: Path, name: str, ids: list[str]) -> np.ndarray:
    """Each question's mean over the last third of the layers less its mean over the first (thirds)."""
    early, late = thirds(as_layers([rows(folder)[question][name] for question in ids]))
    return late - early


def way(interval: tuple[float, float, float]) -> str:
    return "is not told apart from no change" if interval[1] <= 0 <= interval[2] else (
        "rises" if interval[1] > 0 else "falls")


def story(ig: str, attnlrp: str) -> str:
    """Both told apart the same way, both not told apart, opposite ways, or only one told apart from no change."""
    unmoved = "is not told apart from no change"
    if ig == attnlrp:
        return "the same story" if ig != unmoved else "the same story (no change in either)"
    return "different stories" if unmoved in (ig, attnlrp) else "opposite stories"


@cache
def paired(scope: str, name: str, quantifier_only: bool) -> dict:
    """Each method's change by question, its interval and way, and the paired difference's interval."""
    ig_run, attnlrp_run, _ = SCOPES[scope]
    ids = sorted(rows(ig_run))
    assert ids == sorted(rows(attnlrp_run))  # the same questions
    if quantifier_only:
        ids = [question for question in ids if rows(ig_run)[question]["is_quantifier"]]
    ig, attnlrp = change_by_question(ig_run, name, ids), change_by_question(attnlrp_run, name, ids)
    both = ~np.isnan(ig) & ~np.isnan(attnlrp)
    found = {method: bootstrap(values[both]) for method, values in (("IG", ig), ("AttnLRP", attnlrp))}
    ways = {method: way(interval) for method, interval in found.items()}
    return {"found": found, "ways": ways, "story": story(ways["IG"], ways["AttnLRP"]),
            "difference": bootstrap(ig[both] - attnlrp[both]), "n": int(both.sum())}


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("name, label, quantifier_only", PAIRED_CLAIMS)
def test_ig_against_attnlrp_question_by_question_says_what_its_intervals_allow(scope, name, label,
                                                                               quantifier_only):
    found = paired(scope, name, quantifier_only)
    ig, attnlrp = found["found"]["IG"], found["found"]["AttnLRP"]
    says(SCOPES[scope][2],
         f"{label} {found['ways']['IG']} under IG ({interval_text(ig)} points) and {found['ways']['AttnLRP']} under "
         f"AttnLRP ({interval_text(attnlrp)} points), over {found['n']:,} questions: {found['story']}; IG's change "
         f"less AttnLRP's: {interval_text(found['difference'])} points, {told(found['difference'])}")


SHORT = {"category_query": "the question's words", "category_supporting": "the supporting words",
         "answer_attribution": "the answer", "quantifier_share": "the numbers"}


@pytest.mark.parametrize("scope", SCOPES)
def test_the_comparisons_heading_sums_up_its_claims(scope):
    """"the same story" only where every claim tells it, "in different sizes" only where every difference is told
    apart; otherwise the heading names the claims that differ."""
    found = {name: paired(scope, name, quantifier_only) for name, _, quantifier_only in PAIRED_CLAIMS}
    differ = [SHORT[name] for name, claim in found.items() if claim["story"] != "the same story"]
    if differ:
        summary = "the same story but for " + " and ".join(differ)
    else:
        sizes = all(told(claim["difference"]) == "told apart" for claim in found.values())
        summary = "the same story" + (", in different sizes" if sizes else "")
    says(SCOPES[scope][2], f"IG against AttnLRP, question by question, {scope}: {summary}.**")  # the whole heading


# --------------------------------------------------------------------------------- every decimal is read back

# decimals the sections quote that no run's rows hold: the paper's, and a time
NOT_FROM_ROWS = [r"SQuAD v1\.1", r"the paper: 5\.6 % → 15\.5 %", r"about 0\.3 s"]


def _every_check():
    """Each test above with each of its parameter sets, as pytest would call it."""
    for name, check in list(globals().items()):
        if not name.startswith("test_") or name == "test_every_decimal_of_the_sections_is_read_back":
            continue
        grids = []
        for mark in (m for m in getattr(check, "pytestmark", []) if m.name == "parametrize"):
            names = [n.strip() for n in mark.args[0].split(",")]
            grids.append([dict(zip(names, values if len(names) > 1 else (values,))) for values in mark.args[1]])
        for combination in itertools.product(*grids):
            yield check, {key: value for part in combination for key, value in part.items()}


def test_every_decimal_of_the_sections_is_read_back(monkeypatch):
    """Each decimal number in these sections lies inside a phrase a test above reads back, one the section holds
    once (so that altering the number fails that test), but those NOT_FROM_ROWS lists."""
    said: dict[str, set[str]] = {}
    read = says

    def recording(full: FullDev, *phrases: str) -> None:
        read(full, *phrases)
        said.setdefault(full.heading, set()).update(phrases)

    monkeypatch.setattr(sys.modules[__name__], "says", recording)
    for check, arguments in _every_check():
        check(**arguments)
    unread = []
    for heading, phrases in said.items():
        text = section(heading)
        covered = {i for phrase in phrases if text.count(phrase) == 1
                   for i in range(text.index(phrase), text.index(phrase) + len(phrase))}
        covered |= {i for pattern in NOT_FROM_ROWS for m in re.finditer(pattern, text) for i in range(*m.span())}
        unread += [text[max(0, m.start() - 40):m.end() + 10] for m in re.finditer(r"\d+\.\d+", text)
                   if not set(range(*m.span())) <= covered]
    assert len(said) == len(RUNS.args[1]) and unread == [], unread
