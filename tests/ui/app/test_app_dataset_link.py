"""The Dataset page opens on the run that scored the most questions, keeps its run and filter in the link (a link
reopens them; a value it cannot use falls back, said in one sentence), and each quantifier count it shows agrees
with the chart beside it or says why not: checked on hand-made runs and on the committed runs' own rows."""
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from rcqa.dataset import store
from tests.helpers.app_harness import APP, TIMEOUT, plotly_specs, texts
from tests.helpers.hand_runs import HAND_ROWS, MANIFEST, write_manifest_json

pytestmark = pytest.mark.usefixtures("app_env")
PAGE = "pages/dataset.py"
COMMITTED = Path(__file__).resolve().parents[3] / "reports" / "runs"


def hand_run(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / store.SHARDS).mkdir()
    store.write_shard(folder, rows)
    write_manifest_json(folder, MANIFEST)
    return folder


@pytest.fixture
def three_runs(tmp_path, monkeypatch):
    """Runs of 1, 3 and 2 questions, named so that the largest is neither first nor last."""
    for name, rows in (("a-one", HAND_ROWS[:1]), ("b-three", HAND_ROWS), ("c-two", HAND_ROWS[1:])):
        hand_run(tmp_path / name, rows)
    monkeypatch.setenv("RCQA_RUNS", str(tmp_path))
    return tmp_path


def open_link(query: dict[str, str]) -> AppTest:
    """The Dataset page opened straight from a link (the default page would rewrite the link to its own)."""
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.query_params.update(query)
    app.switch_page(PAGE).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def shown_run(app: AppTest) -> str:
    return Path(str(app.selectbox(key="rcqa.dataset.run").value)).name


def metric(app: AppTest, label: str) -> str:
    return next(m.value for m in app.metric if m.label == label)


def test_a_link_naming_no_run_opens_the_largest_and_names_it(three_runs):
    app = open_link({})
    assert shown_run(app) == "b-three" and metric(app, "Examples") == "3"
    assert dict(app.query_params) == {"ds": "b-three"}
    assert "b-three (default): 3 examples, model default" in app.selectbox(key="rcqa.dataset.run").options


def test_a_link_reopens_its_run_and_filter_and_a_change_is_written_back(three_runs):
    app = open_link({"ds": "c-two", "dstype": "how many", "dsem": "wrong"})
    assert (shown_run(app), app.selectbox(key="rcqa.dataset.question_type").value,
            app.selectbox(key="rcqa.dataset.correct").value) == ("c-two", "how many", "wrong")
    assert metric(app, "Examples") == "1"  # of c-two's rows b and c, b alone is a wrong "how many" answer
    assert not app.warning
    app.selectbox(key="rcqa.dataset.run").set_value(str((three_runs / "a-one").resolve())).run()
    app.selectbox(key="rcqa.dataset.quantifier").set_value("other questions").run()
    app.selectbox(key="rcqa.dataset.question_type").set_value("any").run()
    assert dict(app.query_params) == {"ds": "a-one", "dsem": "wrong", "dsquant": "other"}
    again = open_link(dict(app.query_params))
    assert (shown_run(again), again.selectbox(key="rcqa.dataset.quantifier").value) == ("a-one", "other questions")
    assert "No example of this run matches the filter." in texts(again.warning)  # a-one's one row was right


def test_a_link_compares_two_runs_and_keeps_them_past_a_page_switch(three_runs):
    app = open_link({"ds": "a-one", "dsvs": "c-two"})
    assert Path(str(app.selectbox(key="rcqa.dataset.compare").value)).name == "c-two"
    assert set(app.table[0].value.run) == {"a-one (default)", "c-two (default)"}
    app.switch_page("pages/model.py").run()
    app.switch_page(PAGE).run()
    assert (shown_run(app), dict(app.query_params)) == ("a-one", {"ds": "a-one", "dsvs": "c-two"})


def test_bad_values_in_a_link_fall_back_each_with_one_sentence(three_runs):
    app = open_link({"ds": "gone", "dsvs": "gone-too", "dstype": "whence", "dsquant": "yes"})
    assert [w.value for w in app.warning] == [
        "This link names a run 'gone' that this server does not have, so the largest, b-three, is shown.",
        "Ignored dsvs='gone-too' from the link: it names no other run here.",
        "Ignored dstype='whence' from the link: choose one of what, who, when, where, which, why, how many, how "
        "much, how, other.",
        "Ignored dsquant='yes' from the link: choose one of quantifier, other."]
    assert shown_run(app) == "b-three" and metric(app, "Examples") == "3"
    assert dict(app.query_params) == {"ds": "b-three"}


def committed_counts(run: Path) -> tuple[int, int, int]:
    """(rows, quantifier questions, those with a quantifier ratio), read from the run's shards with pyarrow alone."""
    rows = pq.read_table(sorted((run / "shards").glob("*.parquet")), columns=["is_quantifier", "quantifier_share"])
    shares = [share for asked, share in zip(rows["is_quantifier"].to_pylist(), rows["quantifier_share"].to_pylist())
              if asked]
    return rows.num_rows, len(shares), sum(share is not None for share in shares)


def test_the_committed_runs_open_on_the_largest_and_its_quantifier_counts_agree_with_the_chart(monkeypatch):
    monkeypatch.setenv("RCQA_RUNS", str(COMMITTED))
    counts = {run.name: committed_counts(run) for run in sorted(COMMITTED.iterdir()) if (run / "shards").is_dir()}
    largest = max(counts, key=lambda name: counts[name][0])  # max keeps the first of those that tie, as sorted
    _, asked, drawn = counts[largest]
    assert drawn < asked  # the case the review met: 158 quantifier questions, 154 drawn
    app = open_link({})
    assert shown_run(app) == largest and dict(app.query_params) == {"ds": largest}
    assert metric(app, "Quantifier questions") == f"{asked:,}"
    said = (f"{asked:,} quantifier questions; {drawn:,} with two or more numbers in the passage are drawn (the "
            f"ratio is undefined for the other {asked - drawn:,}).")
    assert next(m.help for m in app.metric if m.label == "Quantifier questions") == said
    assert any(said in caption.value for caption in app.caption)  # in the chart's tab, above it
    chart = next(s for s in plotly_specs(app) if s["layout"]["title"]["text"].startswith("Quantifier questions"))
    (line,) = [t["name"] for t in chart["data"] if t.get("mode") == "lines+markers"]
    assert line.endswith(f"({drawn} of {asked} questions)")
