"""What the pages read from a dataset run's folder (its rows, the questions they carry, its summaries under each
filter), kept once per run for the life of the process.

One entry per run folder, replaced when the run changes (its manifest's modification time: the runner rewrites it
after every chunk) and dropped when the folder is no longer a run. There is no count bound, which a visitor could
cycle past (a link names a run and the Dataset page's filter): the runs under $RCQA_RUNS bound it, and within a run
the values a page asks for (its legal filters, which a link's values are checked against: rcqa.ui.runs.LEGAL_FILTERS). Before, 8 runs, 64
summaries and 4 runs' questions were kept for every run together, so a page cycling through more read a run from
disk (1-4 s for the committed runs) or summarised it (0.7-1.8 s) in its own thread on every miss."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import streamlit as st

from rcqa.dataset.store import MANIFEST, run_folders


@st.cache_resource
def _kept() -> tuple[dict[str, tuple[float, dict[Hashable, Any]]], threading.Lock]:
    """The process's runs: folder → (its stamp, what was computed from it by name)."""
    return {}, threading.Lock()


def from_run(folder: Path, what: Hashable, compute: Callable[[], Any], spinner: str | None = None) -> Any:
    """compute(), for the run in `folder` as it is now, kept under `what` (computed once per run and change of it,
    with a spinner saying `spinner` while it is); the value itself, shared by every session: not to be changed."""
    stamp = (folder / MANIFEST).stat().st_mtime
    kept, lock = _kept()
    with lock:
        found = kept.get(str(folder))
        if found is None or found[0] != stamp:
            found = kept[str(folder)] = (stamp, {})
            runs = {str(run) for run in run_folders()}
            for gone in [name for name in kept if name not in runs]:
                del kept[gone]
        values = found[1]
    if what not in values:
        with st.spinner(spinner) if spinner else contextlib.nullcontext():
            values[what] = compute()
    return values[what]

