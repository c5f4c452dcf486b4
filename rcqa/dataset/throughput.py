"""bench --runner: the dataset runner's throughput in questions an hour, as issue 58 states its goals: the first N
SQuAD v1.1 dev questions explained by `reproduce` into a new folder (so nothing is read from an earlier run), the
local Dask cluster's start, the model loads and the last shard's write included, with the load average before and
after, since a busy machine measures something else."""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rcqa.dataset.runner import Job

def default_job(model: str, method: str, device: str | None = None) -> Job:
    """What the goals are stated for: `method` with the default preset's settings, token score and top-5."""
    from rcqa.attribution.settings import PRESETS, resolve
    from rcqa.dataset.runner import Job

    return Job(model, resolve("default", method=method), PRESETS["default"].aggregation, top_k=5, device=device)


def run(model: str, method: str, questions: int, workers: int, device: str | None = None) -> dict[str, Any]:
    """Explain the first `questions` dev questions with `method`'s default settings on `workers` local worker
    processes; returns the wall time, the rate, the goal where one is set, and the machine's load."""
    from rcqa.attribution.layerwise import layerwise_method
    from rcqa.data import load_examples
    from rcqa.dataset.runner import new_manifest, reproduce
    from rcqa.resources import squad_file

    data = squad_file("dev")
    examples = load_examples(data)[:questions]
    job = default_job(model, method, device)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="rcqa-bench-runner-") as folder:
        started = time.perf_counter()
        manifest = reproduce(job, examples, new_manifest(job, "default", data, questions, "squad-dev"), Path(folder),
                             workers=workers, progress=False)
        seconds = time.perf_counter() - started
    counts = manifest.counts
    assert counts is not None  # the runner counts on its first save
    rate = counts.done / seconds * 3600
    goal = layerwise_method(method).runner_goal_per_hour  # questions an hour on 2 CPU cores (issue 58)
    return {"method": method, "model": model, "questions": len(examples), "done": counts.done,
            "failed": counts.failed, "workers": workers, "cores": len(os.sched_getaffinity(0)),
            "seconds": round(seconds, 3), "questions_per_hour": round(rate, 1), "goal_per_hour": goal,
            "goal_met": None if goal is None else rate >= goal,
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def format_table(report: dict[str, Any]) -> str:
    goal = ("" if report["goal_per_hour"] is None else
            f" (goal {report['goal_per_hour']:,}: {'met' if report['goal_met'] else 'not met'})")
    return (f"{report['method']}: {report['done']} of {report['questions']} questions in {report['seconds']} s on "
            f"{report['workers']} workers, {report['questions_per_hour']:,.0f} an hour{goal}; load average "
            f"{report['load_average_before'][0]} before, {report['load_average_after'][0]} after")
