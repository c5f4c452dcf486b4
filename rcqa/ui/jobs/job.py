"""One job of the queue (rcqa.ui.jobs.lanes): its price and clock, what its work is handed while it runs, and why
the queue may refuse or stop it."""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any


class Running:
    """What a job's work is handed while it runs: called with its progress (e.g. each finished layer); `stop`, set
    when the job is to stop (everyone who asked left or cancelled, or it ran past its time limit); and `short`,
    whether the short lane runs it (rcqa.ui.worker may then run it inside a worker busy with a long job). The work
    says when it waits (for a worker process), when it really began (the worker started it) and how long it was
    held (paused for a short job run inside it): the time limit counts neither the waits nor the pauses."""

    def __init__(self, job: Job):
        self._job, self.stop, self.short = job, job.stop, job.lane == "short"

    def waiting(self) -> None:
        """The work waits (for a worker, or inside another task for its checkpoint): its clock stops until began().
        Before its work first began, the clock the queue started when it took the job did not count."""
        job = self._job
        if job.starts == 0:
            job.started = job.since = math.inf
        else:
            job.pause()

    def began(self) -> None:
        """The work began (again, after a worker it waited in ended): its clock goes on from what it has run."""
        job, now = self._job, time.monotonic()
        job.starts += 1
        job.started = min(job.started, now)
        if job.since == math.inf:
            job.since = now

    def held(self, seconds: float) -> None:
        self._job.held += seconds

    def __call__(self, progress: Any) -> None:
        self._job.progress = progress

    def checked(self, progress: Any) -> None:
        """Report progress, unless the job is to stop: then raise Stopped (work run in this process calls this
        between its steps)."""
        self.check()
        self(progress)

    def check(self) -> None:
        if self.stop.is_set():
            raise Stopped(self._job.stopped_because)


Report = Callable[[Any], None]  # what a job calls with its progress
Work = Callable[[Running], Any]


class Busy(RuntimeError):
    """The queue is full; `waiting` jobs are ahead of any new one."""

    def __init__(self, waiting: int):
        super().__init__(f"{waiting} explanations are waiting, the most this server queues; try again shortly")
        self.waiting = waiting


class SessionBusy(Busy):
    """This session already has `held` jobs running or waiting, the most the queue holds for one."""

    def __init__(self, held: int, whose: str = "You have"):
        RuntimeError.__init__(self, f"{whose} {held} explanations or comparisons running or waiting, the most this "
                                    "server takes on for one visitor: wait for them, or cancel one.")
        self.held = held


class ClientBusy(SessionBusy):
    """This client address already has `held` jobs running or waiting (its sessions together), the most the queue
    holds for one."""

    def __init__(self, held: int):
        super().__init__(held, "Your address has")


class Unpriced(ValueError):
    """A job submitted without its price: its expected seconds must be a positive number, its worst case at least
    that. The server's own error (every page prices its jobs), never a visitor's."""


class Cancelled(RuntimeError):
    """The ticket was cancelled (or replaced by a newer request of its session) before its job ran."""


class Stopped(RuntimeError):
    """The running job was stopped: its message says why, in a sentence for the visitor."""


class Job:
    """Work for one key, expected to take `estimate` seconds and `worst` at most, due at `due`: when it arrived plus
    its estimate. Jobs run in order of due, so a long job lets the short ones that arrive while it waits go first,
    but none that arrives after it is due: no job waits for ever. The times it arrived, started (first began
    computing) and ended are kept, from time.monotonic(), and how many times its work began (starts)."""

    def __init__(self, key: str, work: Work, estimate: float, worst: float | None = None):
        self.key, self.work, self.estimate = key, work, estimate
        self.worst = estimate if worst is None else worst
        self.arrived = time.monotonic()
        self.due = self.arrived + estimate
        self.lane = ""  # the lane that runs it: "main" or "short"
        self.askers: dict[str, Callable[[], bool]] = {}  # session → is it still there?
        self.clients: dict[str, str] = {}  # session → its client address, where known
        self.state = "waiting"  # → running → done | failed, or waiting → dropped
        self.progress: Any = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self.stop = threading.Event()  # set to stop it while it runs; stopped_because says why
        self.stopped_because = ""
        self.started = self.ended = math.inf
        self.starts = 0  # times its work began: more than once where a worker ended before it began there
        self.ran = 0.0  # seconds it ran before `since`
        self.since = math.inf  # when its clock last started; inf while it is stopped
        self.held = 0.0  # seconds it was paused while it ran (a short job run inside its worker)

    def wanted(self) -> bool:
        return any(alive() for alive in self.askers.values())

    def pause(self) -> None:
        """Stop its clock (it waits, or it ended), keeping the seconds it ran."""
        if (since := self.since) != math.inf:
            # since first, ran after: running_seconds reads ran, then since, so it never counts a stretch twice
            self.since = math.inf
            self.ran += time.monotonic() - since

    def running_seconds(self) -> float:
        """Seconds of its own running so far: what the time limit counts."""
        ran = self.ran
        since = self.since
        return ran + (time.monotonic() - since if since != math.inf else 0.0) - self.held


def check_price(key: str, estimate: float, worst: float | None) -> None:
    """Unpriced unless `estimate` is a positive number of seconds and `worst`, where given, at least that."""
    priced = isinstance(estimate, (int, float)) and math.isfinite(estimate) and estimate > 0
    if not priced or (worst is not None and not worst >= estimate):
        raise Unpriced(f"the job {key[:80]!r} has no price (expected {estimate!r} s, worst {worst!r} s): every job "
                       "is submitted with the positive seconds it is expected to take")
