"""reproduce with a model that may abstain: each row records whether it did and p(no answer); runs filter by it."""
from dataclasses import replace

import pyarrow.parquet as pq

from rcqa.dataset import store
from rcqa.dataset.aggregate import load_run, select
from rcqa.dataset.rows import example_row
from rcqa.types import NoAnswer
from tests.helpers.handmade import handmade
from tests.helpers.orchard import PASSAGE, QUESTION, QUESTION_TEXT, SIX_HUNDRED
from tests.helpers.hand_runs import HAND_ROWS, write_run


def hand_result(no_answer=None):
    result = handmade(QUESTION, PASSAGE, explained=(SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)
    return replace(result, answer=replace(result.answer, no_answer=no_answer))


def test_rows_record_abstained_and_the_null_probability():
    abstained = example_row(hand_result(NoAnswer(5.0, 0.7, 0.0, True, 0, 2.0)), "l2", 5)
    assert (abstained["abstained"], abstained["null_probability"], abstained["prediction"]) == (True, 0.7, "")
    answered = example_row(hand_result(NoAnswer(1.0, 0.2, 0.0, False, 0, 2.0)), "l2", 5)
    assert (answered["abstained"], answered["null_probability"], answered["prediction"]) == (False, 0.2, "600")
    plain = example_row(hand_result(), "l2", 5)
    assert plain["abstained"] is None and plain["null_probability"] is None


def test_runs_filter_by_abstention_and_old_runs_still_load(tmp_path):
    rows = [{**HAND_ROWS[0], "abstained": True, "null_probability": .8},
            {**HAND_ROWS[1], "abstained": False, "null_probability": .1}, HAND_ROWS[2]]
    run = load_run(write_run(tmp_path / "run", rows))
    assert select(run.rows, abstained=True)["id"].to_pylist() == ["a"]
    assert select(run.rows, abstained=False)["id"].to_pylist() == ["b"]
    assert run.rows["null_probability"].to_pylist() == [.8, .1, None]
    # a shard written before the columns existed
    old = write_run(tmp_path / "old", HAND_ROWS)
    for shard in (old / store.SHARDS).glob("*.parquet"):
        pq.write_table(pq.read_table(shard).drop_columns(["abstained", "null_probability"]), shard)
    old_rows = load_run(old).rows
    assert "abstained" not in old_rows.column_names and select(old_rows)["id"].to_pylist() == ["a", "b", "c"]
    assert select(old_rows, abstained=True).num_rows == 0


def test_the_report_splits_the_layer_roles_into_answered_and_abstained_questions(tmp_path):
    import json

    import pytest

    from rcqa.dataset.report import write

    rows = [{**HAND_ROWS[0], "abstained": True, "null_probability": .8},
            {**HAND_ROWS[1], "abstained": False, "null_probability": .1},
            {**HAND_ROWS[2], "abstained": True, "null_probability": .7}]
    out = tmp_path / "report"
    write([write_run(tmp_path / "run", rows)], out, images=False)
    parts = json.loads((out / "summary.json").read_text())["by_abstention"]
    assert (parts["answered"]["n"], parts["abstained"]["n"]) == (1, 2)
    # by hand from the rows: b alone answered; a and c abstained, averaged per layer
    assert parts["answered"]["roles"]["answer"][0] == 20 and parts["answered"]["roles"]["answer"][1] is None
    assert parts["abstained"]["roles"]["answer"] == pytest.approx([5, 30, 65])
    assert parts["abstained"]["roles"]["query"] == pytest.approx([55, 15, 5])
    table = (out / "tables" / "dataset-roles-by-abstention.csv").read_text()
    assert "run (default), answered (1)" in table and "run (default), abstained (2)" in table
    assert "answered 1 (EM 0.0); abstained 2 (EM 50.0)" in (out / "report.html").read_text()
    # a run where the model never abstained has no split
    plain = tmp_path / "plain-report"
    write([write_run(tmp_path / "plain", [{**r, "abstained": False} for r in rows])], plain, images=False)
    assert json.loads((plain / "summary.json").read_text())["by_abstention"] == {}
    assert not (plain / "tables" / "dataset-roles-by-abstention.csv").exists()
