"""The short lane with the default model (a script, not a test):

    OMP_NUM_THREADS=1 python -m benchmarks.measure_lanes [--windows 3] [--example lighthouse-when]

One worker process, as on fewer than 8 cores, and the queue's two lanes as the app sets them up. A pasted passage
of `--windows` windows is explained whole (a long job); once it has reported its first progress and run 5 s more,
a gallery example's answer window is explained (a short job). Reported as JSON: the short job's wait (from its
request to its start in the worker) and run, as the queue recorded them; whether it ended before the long one; the
long job's run and the time it was held; and the worker's resident memory, idle and at its peak (sampled every
0.2 s)."""
from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time

import psutil

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.types import Example
from rcqa.ui import worker
from rcqa.ui.capacity import short_job_seconds
from rcqa.ui.jobs import JobQueue
from benchmarks.long_passages import QUESTION, passage_of_windows

LONG_SECONDS = 1000.0  # the whole passage's estimate: long, whatever the server's speed


class PeakRss:
    """The largest resident memory of one process, sampled in a thread."""

    def __init__(self, process: psutil.Process):
        self.process, self.peak_mb, self._stop = process, 0.0, threading.Event()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            try:
                self.peak_mb = max(self.peak_mb, self.process.memory_info().rss / 2**20)
            except psutil.Error:
                continue

    def stop(self) -> int:
        self._stop.set()
        return round(self.peak_mb)


def measure(windows: int, example_id: str) -> dict:
    qa_model = load_model()
    processes = worker.WorkerProcesses(1, threads=1, preload=qa_model.name)
    queue = JobQueue(workers=1, short_workers=1, short_below=short_job_seconds(), time_limit=float("inf"))
    cache = ResultCache(tempfile.mkdtemp())

    def submit(name: str, estimate: float, example: Example):
        settings = ExplainSettings(windows="all") if name == "long" else ExplainSettings()
        task = worker.Task(worker.explanation, qa_model.name, qa_model.fingerprint, str(qa_model.device),
                           (worker.ExplanationRequest(example, settings), cache))
        return queue.submit(name, name, lambda running: processes.run(task, running, running.stop,
                                                                      short=running.short, timing=running),
                            estimate=estimate)

    passage = Example(id="long", passage=passage_of_windows(windows), question=QUESTION)
    (child,) = [c for c in psutil.Process().children() if "spawn_main" in " ".join(c.cmdline())]  # not the tracker
    time.sleep(20)  # the worker has loaded the model
    idle_mb, rss = round(child.memory_info().rss / 2**20), PeakRss(child)
    long = submit("long", LONG_SECONDS, passage)
    while long.progress is None:
        time.sleep(0.1)
    time.sleep(5)
    short = submit("short", 0.0, gallery_example(example_id))
    short.wait()
    long.wait()
    asked, whole = short.job, long.job
    return {"windows": windows, "short_example": example_id, "states": [short.state, long.state],
            "short_wait_seconds": round(asked.started - asked.arrived, 2),
            "short_run_seconds": round(asked.ended - asked.started, 2),
            "short_ended_before_long": asked.ended < whole.ended,
            "long_run_seconds": round(whole.ended - whole.started, 1), "long_held_seconds": round(whole.held, 1),
            "worker_idle_rss_mb": idle_mb, "worker_peak_rss_mb": rss.stop()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--example", default="lighthouse-when")
    arguments = parser.parse_args()
    print(json.dumps(measure(arguments.windows, arguments.example), indent=1))


if __name__ == "__main__":
    main()
