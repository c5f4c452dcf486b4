"""`reproduce --sanity`: the dataset's sanity-check averages worked out by hand, the verdict rule, a run without
the checks, and a run's cells equal to sanity_checks run directly on each example."""
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from rcqa.attribution.methods import METHODS
from rcqa.attribution.settings import ExplainSettings
from rcqa.dataset.aggregate import load_run, summarize
from rcqa.dataset.sanity import summarize_sanity
from rcqa.faithfulness.sanity import sanity_checks
from rcqa.gallery import gallery_example
from tests.dataset.test_dataset import reproduce_cli
from tests.helpers.hand_runs import HAND_ROWS, write_run
from tests.helpers.squad_files import squad_json

EXAMPLES = ("lighthouse-who", "orchard-how-many")

PARTS = ["QA head", "block 1", "block 0", "embeddings"]  # a two-block model: the verdict step is block 0 (index 2)


def cell(rho: list, overlap: list, independent: float = 0.0) -> str:
    """One question's cell: the gradient's magnitude with these cascade ρ and overlaps; its independent series flat."""
    series = {"cascade": {"spearman": rho, "top_k_overlap": overlap},
              "independent": {"spearman": [independent] * 4, "top_k_overlap": [1.0] * 4}}
    return json.dumps({"k": 5, "fail_at": 0.5, "seed": 0, "seconds": 1.0, "methods": ["gradient"], "parts": PARTS,
                       "verdict_step": 2, "entries": {"gradient:magnitude": series}})


def hand_run(tmp_path, cells):
    return load_run(write_run(tmp_path / "run", [{**row, "sanity": c} for row, c in zip(HAND_ROWS, cells)]))


def test_means_shares_and_a_failing_verdict_by_hand(tmp_path):
    # verdict step (index 2): ρ 0.9, 0.7, None → mean 0.8 over 2, interval within [0.7, 0.9] ≥ 0.5: fails
    run = hand_run(tmp_path, [cell([1.0, 0.9, 0.9, 0.2], [1.0, 0.8, 0.6, 0.2]),
                              cell([0.8, 0.6, 0.7, 0.0], [1.0, 0.6, 0.4, 0.0]),
                              cell([0.6, 0.3, None, None], [0.4, 0.4, 0.2, 0.2])])
    found = summarize(run).sanity
    assert (found["n"], found["parts"], found["verdict_step"], found["methods"]) == (3, PARTS, 2, ["gradient"])
    entry = found["entries"]["gradient:magnitude"]
    cascade = entry["cascade"]
    assert [s["spearman"]["mean"] for s in cascade] == pytest.approx([0.8, 0.6, 0.8, 0.1])
    assert [s["spearman"]["n"] for s in cascade] == [3, 3, 2, 2]
    assert [s["top_k_overlap"] for s in cascade] == pytest.approx([0.8, 0.6, 0.4, 2 / 15])
    assert [s["at_or_above"] for s in cascade] == pytest.approx([100, 200 / 3, 200 / 3, 0])
    low, high = cascade[2]["spearman"]["low"], cascade[2]["spearman"]["high"]
    assert 0.7 <= low <= 0.8 <= high <= 0.9  # a bootstrap of the two means 0.9 and 0.7
    # an undefined ρ passes: the failing share counts 2 of 3 questions
    assert entry["failing"] == pytest.approx(200 / 3) and entry["outcome"] == "fails"
    assert entry["verdict"].startswith(f"{METHODS['gradient'].label}, magnitude fails the sanity check over 3 "
                                       "questions: with the QA head and every block randomised, its mean Spearman ρ "
                                       "with the trained model's word scores is 0.80 (95 % interval")
    assert [s["spearman"]["mean"] for s in entry["independent"]] == [0.0] * 4
    assert [s["at_or_above"] for s in entry["independent"]] == [0.0] * 4


@pytest.mark.parametrize("rhos, outcome", [
    ([0.1, 0.2, 0.3], "passes"),  # the interval lies within [0.1, 0.3], under 0.5
    ([0.1, 0.9, 0.5], "not clear"),  # it straddles 0.5
    ([0.6, 0.6, 0.6], "fails"),  # equal values: the interval collapses onto 0.6, at least 0.5
    ([0.9, None, None], "not clear"),  # one defined ρ: no interval
])
def test_the_verdict_reads_the_interval_at_the_verdict_step(tmp_path, rhos, outcome):
    run = hand_run(tmp_path, [cell([0.0, 0.0, rho, 0.0], [0.0] * 4) for rho in rhos])
    entry = summarize(run).sanity["entries"]["gradient:magnitude"]
    assert entry["outcome"] == outcome
    assert entry["failing"] == pytest.approx(100 * sum(r is not None and r >= 0.5 for r in rhos) / 3)
    assert ("not clear" in entry["verdict"]) == (outcome == "not clear")


def test_the_report_shows_the_checks(tmp_path):
    from rcqa.dataset.report import write

    rows = [{**row, "sanity": cell([0.0, 0.0, rho, 0.0], [0.0, 0.0, 0.5, 0.0])}
            for row, rho in zip(HAND_ROWS, (0.1, 0.2, 0.3))]
    out = tmp_path / "report"
    write([write_run(tmp_path / "run", rows)], out, images=False)
    table = pd.read_csv(out / "tables" / "sanity.csv")
    assert len(table) == 2 * 4  # one entry, two series, four steps
    verdict_step = table[(table.series == "cascade") & (table.step == 2)].iloc[0]
    assert verdict_step.mean_spearman == pytest.approx(0.2) and verdict_step.mean_top_k_overlap == 0.5
    assert verdict_step.randomised == "… block 0" and verdict_step.questions == 3
    chart = pd.read_csv(out / "tables" / "dataset-sanity.csv")
    assert set(chart.series) == {"cascade"} and len(chart) == 4
    page = (out / "report.html").read_text()
    assert "Does the explanation notice when the model is destroyed?" in page
    assert f"{METHODS['gradient'].label}, magnitude passes the sanity check over 3 questions" in page


def test_a_run_without_the_checks_still_summarizes(tmp_path):
    run = load_run(write_run(tmp_path / "run", HAND_ROWS))
    assert summarize(run).sanity is None
    old = write_run(tmp_path / "old", HAND_ROWS)  # shards written before the column existed
    for shard in (old / "shards").glob("*.parquet"):
        pq.write_table(pq.read_table(shard).drop_columns(["sanity"]), shard)
    assert summarize_sanity(load_run(old).rows) is None and summarize(load_run(old)).n == 3



@pytest.mark.slow  # a cluster, and 2 × 11 models explained by every method twice: about 45 s
def test_a_runs_cells_equal_the_checks_run_directly(tmp_path, tiny_model_dirs, one_torch_thread):
    from rcqa.model import load_model

    data_file, out = tmp_path / "squad.json", tmp_path / "sanity"
    data_file.write_text(json.dumps(squad_json([gallery_example(i) for i in (*EXAMPLES, "bridge-how-much")])))
    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"], "--workers", "1", "--limit", "2", "--sanity") == 0
    rows = {row["id"]: row for row in pq.read_table(out / "shards").to_pylist()}
    assert set(rows) == set(EXAMPLES)
    qa_model = load_model(tiny_model_dirs["bert"])
    for example_id, row in rows.items():
        direct = sanity_checks(qa_model, gallery_example(example_id), settings=ExplainSettings(tolerance=None))
        stored = json.loads(row["sanity"])
        assert stored["parts"] == [p.label for p in direct.parts] and stored["verdict_step"] == direct.verdict_step
        assert set(stored["entries"]) == {entry.name for entry in direct.entries} and "random" in stored["methods"]
        for name, found in ((entry.name, result) for entry, result in direct.entries.items()):
            for series in ("cascade", "independent"):
                np.testing.assert_allclose(np.array(stored["entries"][name][series]["spearman"], dtype=float),
                                           np.array(found.spearman[series], dtype=float), atol=1e-6, equal_nan=True)
                assert stored["entries"][name][series]["top_k_overlap"] == found.top_k_overlap[series]
    assert json.loads((out / "manifest.json").read_text())["analysis"]["extras"] == ["sanity"]
    summary = summarize(load_run(out)).sanity
    assert summary["n"] == 2 and summary["entries"]["random"]["outcome"] == "fails"  # it never reads the weights
