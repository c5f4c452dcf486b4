"""How long a queue's workers take to be ready, and what each holds (a script, not a test; docs/serving.md,
"Workers are forked from a fork server"):

    python -m benchmarks.measure_worker_start [--repeats 3] [--workers 2]

Each repeat starts the app's worker processes with the default model preloaded and times them until every one
has answered a task that computes nothing; the first repeat also starts the fork server. Then each worker's
memory (resident, proportional and unique set) and the fork server's. Prints the load average before and after
(other work on the cores slows every figure)."""
from __future__ import annotations

import argparse
import os
import time

import psutil

from rcqa.resources import DEFAULT_MODEL_DIR
from rcqa.ui.child import Task
from rcqa.ui.worker import WorkerProcesses


def nothing(qa_model, report) -> int:
    return os.getpid()


def ready_after(workers: int) -> tuple[float, WorkerProcesses]:
    """Seconds until `workers` new workers have each answered a task, and the workers."""
    start = time.perf_counter()
    processes = WorkerProcesses(workers, threads=1, preload=str(DEFAULT_MODEL_DIR))
    answered = {processes.run(Task(nothing, "", "", "cpu"), lambda _: None) for _ in range(workers)}
    while len(answered) < workers:  # a worker that answered is idle longest, and so asked first again
        answered.add(processes.run(Task(nothing, "", "", "cpu"), lambda _: None))
    return time.perf_counter() - start, processes


def memory(pid: int) -> str:
    held = psutil.Process(pid).memory_full_info()
    return ", ".join(f"{name} {getattr(held, name) / 2**20:,.0f} MB" for name in ("rss", "pss", "uss"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for repeat in range(options.repeats):
        seconds, processes = ready_after(options.workers)
        print(f"start {repeat + 1}: {options.workers} workers ready in {seconds:.2f} s")
        if repeat == options.repeats - 1:
            for pid in processes.pids():
                print(f"  worker {pid}: {memory(pid)}")
            workers = set(processes.pids())
            for child in psutil.Process().children():
                if child.pid not in workers and "forkserver" in " ".join(child.cmdline()):
                    print(f"  fork server {child.pid}: {memory(child.pid)}")
        processes.close()
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
