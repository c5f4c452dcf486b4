"""The typed documents of a dataset run: every committed run's manifest.json reads into a RunManifest and writes
back the very same text; every committed report's summary.json reads into a DatasetReport and writes back what it
holds; hand-written and damaged manifests; a summary of a hand-made run saved, loaded and drawn."""
import json
from pathlib import Path

import pytest

from rcqa.attribution.settings import ExplainSettings
from rcqa.dataset.aggregate import load_run, summarize
from rcqa.dataset.manifest import RunCounts, RunManifest, Session, Unexplained
from rcqa.dataset.report import DatasetReport
from rcqa.dataset.summary import DatasetSummary
from rcqa.types.settings import Windowing
from tests.helpers.hand_runs import HAND_ROWS, MANIFEST, write_run

ROOT = Path(__file__).resolve().parents[2]
COMMITTED_RUNS = sorted((ROOT / "reports" / "runs").glob("*/manifest.json"))


def test_there_are_committed_runs_to_read():
    assert len(COMMITTED_RUNS) >= 10


@pytest.mark.parametrize("path", COMMITTED_RUNS, ids=lambda path: path.parent.name)
def test_every_committed_manifest_loads_and_saves_back_to_the_same_text(path, tmp_path):
    manifest = RunManifest.load(path)
    written = json.loads(path.read_text())
    assert manifest.model.fingerprint == written["model"]["fingerprint"]
    assert manifest.counts is not None and manifest.counts.total == written["counts"]["total"]
    assert len(manifest.runs) == len(written["runs"]) and manifest.runs[0].started == written["runs"][0]["started"]
    # the runner wrote json.dumps(manifest, indent=2): the typed manifest writes every key back, in its place
    assert manifest.save(tmp_path / "manifest.json").read_text() == path.read_text()


def test_the_paper_code_run_records_the_papers_settings_and_the_models_window():
    manifest = RunManifest.load(ROOT / "reports" / "runs" / "squad-dev-1000-paper-code" / "manifest.json")
    assert manifest.analysis.preset == "paper-code" and manifest.analysis.aggregation == "l2"
    assert manifest.analysis.explained_with() == (ExplainSettings.paper(), Windowing(max_len=384, doc_stride=128))


def test_a_contrast_run_keeps_its_skipped_questions_and_its_selection():
    manifest = RunManifest.load(ROOT / "reports" / "runs" / "squad-dev-quantifier-contrast" / "manifest.json")
    written = json.loads((ROOT / "reports" / "runs" / "squad-dev-quantifier-contrast" / "manifest.json").read_text())
    assert manifest.data.questions == "quantifier"
    assert manifest.skipped == tuple(Unexplained(s["id"], s["reason"]) for s in written["skipped"])
    assert manifest.counts == RunCounts(written["counts"]["total"], written["counts"]["done"],
                                        written["counts"]["failed"], len(written["skipped"]))


def test_a_hand_written_manifest_reads_with_what_it_lacks_left_out():
    manifest = RunManifest.from_dict(MANIFEST)
    assert (manifest.rcqa_version, manifest.counts, manifest.skipped, manifest.analysis.extras) == (None, None,
                                                                                                    None, ())
    assert manifest.runs[2] == Session("2026-11-30T12:00:00+00:00")  # killed: never finished, computed nothing
    assert manifest.data.to_dict() == MANIFEST["data"] and manifest.failed == (Unexplained("d", "too long"),)
    assert "preset default" in repr(manifest) and "abc" in repr(manifest)


def test_a_damaged_manifest_is_refused_in_one_sentence(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"model": {"name": "default"}}))  # no fingerprint
    with pytest.raises(ValueError, match="manifest.json does not hold a RunManifest"):
        RunManifest.load(tmp_path / "manifest.json")


COMMITTED_REPORTS = sorted((ROOT / "reports").glob("**/summary.json"))
# what a later version added to summary.json, and what a summary without it holds there: not computed
ADDED_LATER = {"sanity": None, "heads": None, "pruning": None, "contrast": None, "sentences": None, "n_skipped": 0,
               "by_abstention": {}, "question_by_question": {}}


def test_there_are_committed_reports_to_read():
    assert len(COMMITTED_REPORTS) >= 8


@pytest.mark.parametrize("path", COMMITTED_REPORTS, ids=lambda path: path.parent.name)
def test_every_committed_report_summary_loads_and_saves_back_what_it_holds(path, tmp_path):
    written = json.loads(path.read_text())
    report = DatasetReport.load(path)
    assert report.run == written["run"] and report.subject.n == written["n"]
    assert report.subject.settings.top_k == written["settings"]["top_k"]
    assert [v.holds for v in report.conclusions[report.run]] == [v["holds"] for v in written["conclusions"][report.run]]
    saved = json.loads(report.save(tmp_path / "summary.json").read_text())
    pairs = [(saved, written), *((saved["compared_runs"][name], s) for name, s in written["compared_runs"].items())]
    for summary, original in pairs:
        summary, original = ({k: v for k, v in d.items() if k != "compared_runs"} for d in (summary, original))
        assert {key: value for key, value in summary.items() if key in original} == original
        assert {key: summary[key] for key in summary.keys() - original.keys()} == {
            key: ADDED_LATER[key] for key in summary.keys() - original.keys()}


def test_a_hand_run_summary_saves_loads_and_draws_the_numbers_worked_by_hand(hand_run, tmp_path):
    summary = summarize(load_run(hand_run))
    again = DatasetSummary.load(summary.save(tmp_path / "summary.json"))
    assert again == summary and again.settings.preset == "default"
    answer = next(trace for trace in again.show("roles").data if trace.name == "answer: default")
    assert list(answer.y) == pytest.approx([10, 30, 70])  # rows a, b, c's answer shares, as test_dataset_report
    quantifier = next(trace for trace in again.show("quantifier").data if trace.name == "default (1 questions)")
    assert list(quantifier.y) == pytest.approx([10, 30, 50])  # the one quantifier question's ratio
    assert "DatasetSummary of 3 questions" in again._repr_html_()
    with pytest.raises(ValueError, match="unknown view 'heatmap'"):
        again.show("heatmap")


@pytest.fixture
def hand_run(tmp_path):
    return write_run(tmp_path / "hand", HAND_ROWS)
