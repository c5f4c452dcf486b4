"""A run's summary over all its rows, kept in its folder (rcqa.dataset.kept_summary): what a fresh summary of the
rows it holds would say, to the character, and never read once the rows or the code that summarises changed."""
import json
import shutil
from pathlib import Path

import pytest

from rcqa.dataset import kept_summary as kept_module
from rcqa.dataset.aggregate import load_run, summarize
from rcqa.dataset.heads import PRUNING
from rcqa.dataset.kept_summary import KEPT, keep_summary, kept_summary

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(manifest.parent for manifest in (ROOT / "reports" / "runs").glob("*/manifest.json"))
SMALL = ROOT / "reports" / "runs" / "squad-dev-10-sanity"
PRUNED = {"counts": [0, 3], "n": 10, "f1": {"random": [80.0, 79.5]}, "spared": {"random": 3}}


@pytest.mark.slow
@pytest.mark.parametrize("folder", COMMITTED, ids=lambda folder: folder.name)
def test_every_committed_run_keeps_the_summary_its_rows_give_today(folder):
    """The guard on summarize itself: a change to what it computes fails here until the kept summaries are made
    again (docs/datasets.md says how), so the Dataset page never opens on numbers the rows no longer give."""
    found = kept_summary(folder)
    assert found is not None, (f"{folder.name} keeps no summary of its rows, or one the code that summarises has "
                               "changed since (any edit to rcqa/dataset/*.py, rcqa/faithfulness/ or rcqa/intervals.py): "
                               "keep them again with keep_summary (docs/datasets.md)")
    assert found.to_json() == summarize(load_run(folder)).to_json()


def test_a_kept_summary_is_read_only_while_the_rows_and_the_code_that_summarises_are_the_same(tmp_path, monkeypatch):
    folder = tmp_path / SMALL.name
    shutil.copytree(SMALL, folder)
    (folder / KEPT).unlink(missing_ok=True)
    assert kept_summary(folder) is None

    written = keep_summary(folder)
    assert kept_summary(folder).to_json() == written.to_json() == summarize(load_run(folder)).to_json()

    code = tmp_path / "rcqa"
    shutil.copytree(kept_module.PACKAGE, code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(kept_module, "PACKAGE", code)
    assert kept_summary(folder) is not None  # the same code, elsewhere
    with (code / "intervals.py").open("a") as source:
        source.write("# an edit\n")
    assert kept_summary(folder) is None
    monkeypatch.undo()

    manifest = folder / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"total"', '"total" ', 1))  # the runner rewrote it
    assert kept_summary(folder) is None

    keep_summary(folder)
    (folder / PRUNING).write_text(json.dumps(PRUNED))  # prune-heads wrote a curve after the sitting
    assert kept_summary(folder) is None
    assert keep_summary(folder).pruning == PRUNED and kept_summary(folder).pruning == PRUNED
    (folder / PRUNING).unlink()  # and it is gone again
    assert kept_summary(folder) is None

    keep_summary(folder)
    (folder / KEPT).write_text((folder / KEPT).read_text()[:100])  # cut short
    assert kept_summary(folder) is None
    (folder / KEPT).write_text(json.dumps({"run_sha256": 1}))
    assert kept_summary(folder) is None
