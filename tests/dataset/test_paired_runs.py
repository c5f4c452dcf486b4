"""Two runs read question by question (rcqa.dataset.paired_runs), on hand-written rows whose changes are worked out
by hand; the intervals are scipy's percentile bootstrap computed here, and each sentence is read against them."""
import json

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from rcqa.dataset.aggregate import load_run
from rcqa.dataset.paired_runs import compare_runs, statements, thirds_change
from rcqa.dataset.report import DatasetReport, write
from tests.helpers.hand_runs import HAND_ROWS, MANIFEST, row, write_run

NAN = np.nan
MINUS = "\u2212"


def scipy_interval(values: list[float]) -> tuple[float, float]:
    """The 95 % percentile bootstrap of the mean, seeded as the house seeds it; a constant sample is its value."""
    if np.ptp(values) == 0:
        return values[0], values[0]
    found = stats.bootstrap((np.array(values, dtype=float),), np.mean, confidence_level=0.95, n_resamples=2000,
                            method="percentile", rng=np.random.default_rng(0)).confidence_interval
    return float(found.low), float(found.high)


def shown(mean: float, low: float, high: float) -> str:
    return f"{mean:+.1f} [{low:+.1f}, {high:+.1f}]".replace("-", MINUS)


def test_a_questions_change_is_its_last_thirds_mean_less_its_firsts():
    # seven layers cut as array_split cuts them: the first three, then two, then the last two
    values = np.array([[1, 2, 3, 4, 5, 6, 7],
                       [NAN, 3, 5, 0, 0, 8, NAN],  # a third's undefined layers left out of its mean
                       [NAN, NAN, NAN, 1, 1, 2, 4]], dtype=float)  # a first third it never defines: no change
    found = thirds_change(values)
    assert found[0] == pytest.approx(6.5 - 2) and found[1] == pytest.approx(8 - 4) and np.isnan(found[2])


@pytest.fixture
def two_runs(tmp_path):
    """HAND_ROWS (a, b, c over three layers: a change is the last layer less the first) and a second run over c, a
    and d, in that order: they share a and c."""
    top = (40, 40, 40)
    other = [row("c", query=(20, 0, 20), supporting=(30, 0, 30), answer_attribution=(20, 20, 30), answer_ceiling=top),
             row("a", query=(30, 0, 10), supporting=(40, 0, 20), answer_attribution=(10, 20, 60), answer_ceiling=top),
             row("d", query=(90, 0, 0), supporting=(90, 0, 0), answer_attribution=(0, 0, 90), answer_ceiling=top)]
    first = write_run(tmp_path / "hand", HAND_ROWS)
    second = write_run(tmp_path / "other", other, {**MANIFEST, "analysis": {**MANIFEST["analysis"],
                                                                             "preset": "paper-code"}})
    return first, second


def test_two_runs_are_paired_on_the_questions_both_hold(two_runs):
    first, second = (load_run(folder).rows for folder in two_runs)
    found = compare_runs(first, second)
    assert found["questions"] == 2  # a and c
    claims = found["claims"]
    # the question's words: a 0 - 60 and c 10 - 50 under the first; a 10 - 30 and c 20 - 20 under the second
    query = claims["query"]
    assert query["n"] == 2 and query["first"]["mean"] == -50 and query["second"]["mean"] == -10
    assert (query["first"]["low"], query["first"]["high"]) == pytest.approx(scipy_interval([-60, -40]))
    assert (query["second"]["low"], query["second"]["high"]) == pytest.approx(scipy_interval([-20, 0]))
    assert query["difference"] == {"mean": -40, "low": -40, "high": -40, "n": 2}  # -40 for both questions
    assert query["story"] == "one"  # the second's interval reaches 0: only the first falls
    # the answer's share: a +40, c +25 under the first; a +50, c +10 under the second; differences -10 and +15
    answer = claims["answer"]
    assert answer["story"] == "same" and answer["difference"]["mean"] == pytest.approx(2.5)
    assert (answer["difference"]["low"], answer["difference"]["high"]) == pytest.approx(scipy_interval([-10, 15]))
    # the supporting words: -20 and 0 under both
    assert claims["supporting"]["story"] == "neither" and claims["supporting"]["difference"]["mean"] == 0
    assert claims["numbers"]["n"] == 0  # b, the one quantifier question, is not in the second run


def test_each_sentence_says_what_its_intervals_allow(two_runs):
    first, second = (load_run(folder).rows for folder in two_runs)
    said = statements(compare_runs(first, second), "IG", "AttnLRP")
    assert len(said) == 3  # no sentence for the numbers, which no shared question defines
    query_first = shown(-50, *scipy_interval([-60, -40]))
    query_second = shown(-10, *scipy_interval([-20, 0]))
    assert said[0] == (f"From the first third of the layers to the last, the question's words' share of the top-5 "
                       f"falls under IG ({query_first} points) and is not told apart from no change under AttnLRP "
                       f"({query_second} points), over 2 questions: different stories; IG's change less AttnLRP's: "
                       f"{MINUS}40.0 [{MINUS}40.0, {MINUS}40.0] points, told apart.")
    assert "the same story (no change in either)" in said[1]
    assert said[1].endswith("+0.0 [+0.0, +0.0] points, not told apart.")
    difference = shown(2.5, *scipy_interval([-10, 15]))
    assert "rises under IG" in said[2] and "rises under AttnLRP" in said[2] and ": the same story;" in said[2]
    assert said[2].endswith(f"{difference} points, not told apart.")


def test_questions_are_matched_by_id_whatever_the_order_and_numbers_asked_of_quantifier_questions_only():
    def table(*rows):
        return pa.Table.from_pylist([{"id": i, "is_quantifier": q, "quantifier_share": s} for i, q, s in rows])

    # y is no quantifier question, though it defines a share: left out of the numbers' claim
    first = table(("x", True, [0, 0, 10]), ("y", False, [0, 0, 50]), ("z", True, [10, 0, 40]))
    second = table(("z", True, [0, 0, 0]), ("x", True, [5, 0, 5]), ("y", False, [50, 0, 0]))
    numbers = compare_runs(first, second)["claims"]["numbers"]
    assert numbers["n"] == 2
    assert numbers["first"]["mean"] == 20 and numbers["second"]["mean"] == 0  # x +10, z +30; x 0, z 0
    assert numbers["difference"]["mean"] == 20  # x +10, z +30


def test_runs_sharing_fewer_than_two_questions_are_not_compared(two_runs, tmp_path):
    lone = write_run(tmp_path / "lone", [row("a"), row("x")])
    assert compare_runs(load_run(two_runs[0]).rows, load_run(lone).rows) is None


def test_the_report_reads_each_other_run_against_its_subject_question_by_question(two_runs, tmp_path):
    out = tmp_path / "report"
    report = write(list(two_runs), out, images=False)
    stored = json.loads((out / "summary.json").read_text())
    assert list(stored["question_by_question"]) == ["other (paper-code)"]
    assert stored["question_by_question"]["other (paper-code)"]["claims"]["query"]["difference"]["mean"] == -40
    assert DatasetReport.from_dict(stored).question_by_question == report.question_by_question
    page = (out / "report.html").read_text()
    assert "Against other (paper-code), question by question" in page
    assert "falls under hand (default)" in page and "different stories" in page
    alone = write([two_runs[0]], tmp_path / "alone", images=False)
    assert alone.question_by_question == {} and "question by question</h2>" not in (
        tmp_path / "alone" / "report.html").read_text()
