"""The worker processes a server's queue lends its jobs to (rcqa.ui.worker.process: one of them)."""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from rcqa.ui.child import Task
from rcqa.ui.jobs import Stopped
from rcqa.ui.worker.process import EXITING, POLL_SECONDS, Displaced, Timing, WorkerProcess

# a task whose process ended before it began goes again; past this many tries its visitor is told, so that a task
# that kills its process before it can begin (its arguments fail to unpickle) is not sent round for ever
DISPLACED_TRIES = 3


class WorkerProcesses:
    """`size` worker processes, started at once, so that their imports (and the model named `preload`, loaded
    on the device it chooses by default) are done before the first job; each run borrows the idle one that has
    waited longest, so that jobs take turns on the workers, and a short run (the queue's short lane) that finds
    none idle goes inside the busy one with the fewest tasks. A process still computing a task that was stopped
    is lent to no one until that task ends (WorkerProcess.takes_borrowers), and one that ended is replaced, on the
    same GPU, as soon as it is seen to have ended. Given `gpus` (rcqa.ui.capacity.job_gpus), worker i is bound to
    gpus[i % len(gpus)]: one worker per GPU by default, jobs spread over them. The job queue's main lane runs at
    most `size` jobs at once, so one of those waits here only for a short job that took an idle worker, or for a
    stopped task to end."""

    def __init__(self, size: int, threads: int, preload: str | None = None, gpus: Sequence[str] = ()):
        self.threads, self.preload = threads, preload
        self._changed = threading.Condition()
        self._closed = False
        self._idle = [self._started(gpus[index % len(gpus)] if gpus else None)
                      for index in range(size)]  # the one idle longest first
        self._lent: dict[WorkerProcess, int] = {}  # busy workers, and the runs each is lent to

    def run(self, task: Task, report: Callable[[Any], None], stop: threading.Event | None = None,
            short: bool = False, timing: Timing | None = None) -> Any:
        """The task's result (WorkerProcess.run). Its clock (timing) runs only while it computes in a worker, not
        while it waits for one, nor inside another task for that task's next checkpoint. A run Displaced from its
        worker (ended before the task began there) goes again at once: it is still the first of its lane, whose
        thread holds it, and it had run for no time there."""
        tries = 0
        while True:
            if timing is not None:
                timing.waiting()
            worker = self._borrow(short, stop)
            try:
                return worker.run(task, report, stop, timing)
            except Displaced:
                tries += 1
                if tries >= DISPLACED_TRIES:
                    raise
            finally:
                self._give_back(worker)

    def pids(self) -> list[int]:
        """The worker processes' ids, idle and busy."""
        with self._changed:
            return [pid for worker in [*self._idle, *self._lent] if (pid := worker.pid) is not None]

    def _borrow(self, short: bool, stop: threading.Event | None) -> WorkerProcess:
        """A worker for the run: the idle one idle longest, or for a short run the busy one with the fewest tasks;
        none still computing a stopped task. A run that has to wait gives up with Stopped once `stop` is set."""
        with self._changed:
            while (worker := self._free_for(short)) is None:
                if stop is not None and stop.is_set():
                    raise Stopped("the job was stopped")
                self._changed.wait(POLL_SECONDS)
            if worker in self._idle:
                self._idle.remove(worker)
            self._lent[worker] = self._lent.get(worker, 0) + 1
            return worker

    def _free_for(self, short: bool) -> WorkerProcess | None:
        self._replace_ended()
        if idle := [worker for worker in self._idle if worker.takes_borrowers()]:
            return idle[0]
        hosts = [worker for worker in self._lent if worker.takes_borrowers()] if short else []
        return min(hosts, key=lambda busy: busy.tasks) if hosts else None

    def _give_back(self, worker: WorkerProcess) -> None:
        with self._changed:
            self._lent[worker] -= 1
            if not self._lent[worker]:
                del self._lent[worker]
                self._idle.append(worker)
                self._replace_ended()
            self._changed.notify_all()

    def _started(self, gpu: str | None) -> WorkerProcess:
        return WorkerProcess(self.threads, self.preload, gpu, ended=self._one_ended)

    def _one_ended(self) -> None:
        """A worker's child ended (killed for its stopped tasks, or it died): an idle one is replaced now, so that
        its successor loads its model before the next job comes."""
        with self._changed:
            self._replace_ended()
            self._changed.notify_all()

    def _replace_ended(self) -> None:
        if self._closed or EXITING.is_set():
            return
        for index, worker in enumerate(self._idle):
            if not worker.alive():
                worker.close()
                self._idle[index] = self._started(worker.gpu)

    def close(self) -> None:
        """End every worker process (a server ends them with itself; a benchmark or test calls this)."""
        with self._changed:
            self._closed = True
            workers = [*self._idle, *self._lent]
        for worker in workers:
            worker.close()
