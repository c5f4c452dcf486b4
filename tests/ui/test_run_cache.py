"""The Dataset page's runs and summaries are kept once per run (issue 42): cycling through more runs than a count
bound held, or through every legal filter of a run, reads each run from disk and summarises each filter once."""
import os
import time

import pytest

from rcqa.dataset.store import MANIFEST, RUNS_ENV, run_folders
from rcqa.dataset.rows import QUESTION_TYPES
from rcqa.ui import run_cache, runs
from tests.helpers.hand_runs import HAND_ROWS, write_run

RUNS = 9  # one more than the 8 runs the page kept before


@pytest.fixture
def many_runs(tmp_path, monkeypatch):
    for index in range(RUNS):
        write_run(tmp_path / f"run-{index}", HAND_ROWS)
    monkeypatch.setenv(RUNS_ENV, str(tmp_path))
    return run_folders()


def counted(monkeypatch, owner, name: str) -> list:
    """Record each call of owner.name from now on."""
    calls, original = [], getattr(owner, name)

    def recorded(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)
    return calls


def test_cycling_through_every_run_twice_reads_each_from_disk_once(many_runs, monkeypatch):
    loads = counted(monkeypatch, runs, "load_run")
    for _ in range(2):
        for folder in many_runs:
            assert runs.run(folder).rows.num_rows == len(HAND_ROWS)
    assert sorted(str(folder) for folder, *_ in loads) == sorted(str(folder) for folder in many_runs)


def every_legal_filter() -> list[runs.Filter]:
    choices = (None, True, False)
    return [runs.Filter(kind, correct, quantifier, abstained) for kind in (None, *QUESTION_TYPES)
            for correct in choices for quantifier in choices for abstained in choices]


def test_cycling_through_every_legal_filter_of_a_run_twice_summarises_each_once(many_runs, monkeypatch):
    filters = every_legal_filter()
    assert len(set(filters)) == 297  # any or one of 10 types, and any, yes or no for the three others
    applied = counted(monkeypatch, runs.Filter, "apply")
    first = [runs.summary(many_runs[0], chosen) for chosen in filters]
    assert len(applied) == len(filters)
    assert [runs.summary(many_runs[0], chosen) for chosen in filters] == first and len(applied) == len(filters)
    assert runs.LEGAL_FILTERS == len(filters)
    with pytest.raises(ValueError, match="no such filter"):
        runs.Filter("a question type no run has")


def test_a_changed_run_is_read_again_and_a_removed_one_is_dropped(many_runs, monkeypatch):
    for folder in many_runs:
        runs.run(folder)
    loads = counted(monkeypatch, runs, "load_run")
    changed = many_runs[0] / MANIFEST
    later = time.time() + 5
    os.utime(changed, (later, later))  # the runner rewrote the manifest after a chunk
    runs.run(many_runs[0])
    runs.run(many_runs[0])
    assert [str(folder) for folder, *_ in loads] == [str(many_runs[0])]
    monkeypatch.setenv(RUNS_ENV, os.pathsep.join(str(folder) for folder in many_runs[:2]))
    changed = many_runs[1] / MANIFEST
    os.utime(changed, (later, later))
    runs.run(many_runs[1])  # a change is when the process looks at which runs there are
    assert set(run_cache._kept()[0]) == {str(folder) for folder in many_runs[:2]}  # every other run dropped
