"""One bounded queue per process for heavy work (explanations), shared by every session of the app.

Every job comes with its price: the seconds it is expected to take and, at most, its worst case (an adaptive
explanation refined up to its max_steps); a job without one (missing, zero, negative, not a number) is refused with
Unpriced. Jobs wait in order of when they are due: when they arrived plus their expected seconds (Job). Two lanes
take them: the main lane's `workers` take any job (what the device holds), the short lane's `short_workers` only
jobs whose worst case is under `short_below` seconds, so that a short job never waits behind a long one (the short
lane runs it beside the long one, or, in one worker process, inside it between its chunks: rcqa.ui.worker). A long
job never runs in the short lane, even an idle one: that lane would then be the long job's, and the next short job
would wait for it.

Identical requests (the same key: the result cache's) are one job, computed once and handed to everyone who asked.
A session has at most one job waiting: asking for another withdraws it from the first. A job nobody waits for any
more (every asker cancelled or left) is dropped before it starts, and stopped while it runs; so is a job running
past `time_limit` seconds of running (not counting its wait for a worker, nor its pauses). Stopping sets the
job's stop event, which its work watches (rcqa.ui.worker checks it between chunks and layers, and ends a worker
process that does not stop in time). Past `limit` waiting jobs, new ones are refused with Busy; so are those of a
session that already has `per_session` jobs running or waiting (SessionBusy), and of a client (an address, which
may hold many sessions) that has `per_client` (ClientBusy): a new job is a new claim on the workers, whatever its
price, so running jobs count as much as waiting ones.

Standard library only: the dashboard (rcqa.ui.queue) adapts it to Streamlit sessions, and rcqa.ui.capacity holds
what the operator sets.
"""
from __future__ import annotations

import bisect
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from rcqa.ui.capacity import client_jobs, job_time_limit, lower_priority, minutes, session_jobs

QUEUE_LIMIT = 32
WATCH_SECONDS = 0.5  # how often the queue looks for running jobs to stop


class Running:
    """What a job's work is handed while it runs: called with its progress (e.g. each finished layer); `stop`, set
    when the job is to stop (everyone who asked left or cancelled, or it ran past its time limit); and `short`,
    whether the short lane runs it (rcqa.ui.worker may then run it inside a worker busy with a long job). The work
    says when it waits (for a worker process), when it really began (the worker started it) and how long it was
    held (paused for a short job run inside it): the time limit counts neither the wait before nor the pauses."""

    def __init__(self, job: Job):
        self._job, self.stop, self.short = job, job.stop, job.lane == "short"

    def waiting(self) -> None:
        """The work waits before it begins (for a worker lent to another job): its clock stops until began()."""
        self._job.started = math.inf

    def began(self) -> None:
        self._job.started = time.monotonic()

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
    but none that arrives after it is due: no job waits for ever. The times it arrived, started (began computing) and
    ended are kept, from time.monotonic()."""

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
        self.held = 0.0  # seconds it was paused while it ran (a short job run inside its worker)

    def wanted(self) -> bool:
        return any(alive() for alive in self.askers.values())


class Ticket:
    """One session's claim on a job: where it stands, its progress, its result."""

    def __init__(self, queue: JobQueue, job: Job, session: str):
        self._queue, self.job, self.session = queue, job, session

    @property
    def key(self) -> str:
        return self.job.key

    @property
    def state(self) -> str:
        """waiting, running, done, failed, or cancelled (this session's claim withdrawn)."""
        return "cancelled" if self.session not in self.job.askers and not self.job.finished.is_set() else self.job.state

    @property
    def progress(self) -> Any:
        return self.job.progress

    def ahead(self) -> int:
        """Jobs that start before this one: those running and those waiting in front of it (0 once it runs)."""
        return self._queue.ahead(self.job)

    def wait(self, timeout: float | None = None) -> bool:
        """True once the job has finished (or this claim was cancelled), waiting at most timeout seconds."""
        return self.job.finished.wait(timeout) or self.state == "cancelled"

    def result(self) -> Any:
        """The job's result; its error if it failed; Cancelled if this claim was withdrawn before it finished."""
        if self.state == "cancelled":
            raise Cancelled(self.key)
        self.job.finished.wait()
        if self.job.error is not None:
            raise self.job.error
        return self.job.result

    def cancel(self) -> None:
        self._queue.withdraw(self.job, self.session)


def check_price(key: str, estimate: float, worst: float | None) -> None:
    """Unpriced unless `estimate` is a positive number of seconds and `worst`, where given, at least that."""
    priced = isinstance(estimate, (int, float)) and math.isfinite(estimate) and estimate > 0
    if not priced or (worst is not None and not worst >= estimate):
        raise Unpriced(f"the job {key[:80]!r} has no price (expected {estimate!r} s, worst {worst!r} s): every job "
                       "is submitted with the positive seconds it is expected to take")


class JobQueue:
    """Jobs in order of due, run by `workers` threads that take any job and `short_workers` threads that take only
    those whose worst case is under `short_below` seconds (the short lane; none by default), started on the first
    submit, and watched by one more thread, which stops the running jobs nobody waits for or that ran past
    `time_limit` seconds (job_time_limit() by default). A session holds at most `per_session` jobs running or
    waiting, a client address `per_client` (rcqa.ui.capacity.session_jobs, client_jobs by default)."""

    def __init__(self, workers: int = 1, limit: int = QUEUE_LIMIT, per_client: int | None = None,
                 time_limit: float | None = None, short_workers: int = 0, short_below: float = 0.0,
                 per_session: int | None = None):
        self.workers, self.limit = workers, limit
        self.per_session = session_jobs() if per_session is None else per_session
        self.per_client = client_jobs() if per_client is None else per_client
        self.short_workers, self.short_below = short_workers, short_below
        self.time_limit = job_time_limit() if time_limit is None else time_limit
        self._waiting: list[Job] = []  # in the order they run: by Job.due
        self._jobs: dict[str, Job] = {}  # waiting or running, by key
        self._running = 0
        self._short_busy = 0  # short-lane threads running a job
        self._changed = threading.Condition()
        self._threads: list[threading.Thread] = []

    def submit(self, key: str, session: str, work: Work, alive: Callable[[], bool] = lambda: True,
               client: str | None = None, *, estimate: float, worst: float | None = None) -> Ticket:
        """Claim the job for key (joining one waiting or running, else queueing `work`, expected to take `estimate`
        seconds and `worst` at most, default `estimate`) for session, of client (its address, None where unknown);
        any other job the session has waiting loses its claim. Unpriced without a price; Busy if a new job would
        pass the limit, SessionBusy or ClientBusy if the session's or the client's own."""
        check_price(key, estimate, worst)
        with self._changed:
            self._prune()
            job = self._jobs.get(key)
            if job is None:
                if len(self._waiting) >= self.limit:
                    raise Busy(len(self._waiting))
                self._check_share(session, client)
                job = self._jobs[key] = Job(key, work, estimate, worst)
                bisect.insort(self._waiting, job, key=lambda waiting: waiting.due)
            for other in [j for j in self._waiting if j is not job and session in j.askers]:
                self._withdraw(other, session)
            job.askers[session] = alive
            if client is not None:
                job.clients[session] = client
            self._start_workers()
            self._changed.notify_all()
            return Ticket(self, job, session)

    def withdraw(self, job: Job, session: str) -> None:
        with self._changed:
            self._withdraw(job, session)
            self._changed.notify_all()

    def ahead(self, job: Job) -> int:
        with self._changed:
            self._prune()
            if job.state != "waiting":
                return 0
            return self._running + next((i for i, waiting in enumerate(self._waiting) if waiting is job),
                                        len(self._waiting))

    @property
    def waiting(self) -> int:
        with self._changed:
            self._prune()
            return len(self._waiting)

    @property
    def running(self) -> int:
        with self._changed:
            return self._running

    def _check_share(self, session: str, client: str | None) -> None:
        """SessionBusy or ClientBusy where the session, or the client's sessions together, already hold their share
        of jobs running or waiting: not counting the waiting one `session` is about to withdraw."""
        claims = [self._kept(job, session) for job in self._jobs.values()]
        if (mine := sum(session in kept for kept in claims)) >= self.per_session:
            raise SessionBusy(mine)
        if client is not None and (theirs := sum(client in kept.values() for kept in claims)) >= self.per_client:
            raise ClientBusy(theirs)

    @staticmethod
    def _kept(job: Job, session: str) -> dict[str, str | None]:
        """The job's askers (session → its client address, None where unknown) once `session` has withdrawn a
        claim on it that is still waiting, as its next request does."""
        return {asker: job.clients.get(asker) for asker in job.askers
                if not (asker == session and job.state == "waiting")}

    def _withdraw(self, job: Job, session: str) -> None:
        job.askers.pop(session, None)
        job.clients.pop(session, None)
        if job.state == "waiting" and not job.askers:
            self._drop(job)
        elif job.state == "running" and not job.askers:
            self._stop(job, "it was cancelled")

    def _stop(self, job: Job, because: str) -> None:
        if not job.stop.is_set():
            job.stopped_because = because
            job.stop.set()

    def _watch(self) -> None:
        """Stop the running jobs whose askers have all gone (closed their tab: a page that polls is not needed for
        this) or that ran past the time limit."""
        while True:
            with self._changed:
                self._changed.wait(WATCH_SECONDS)
                self._stop_unwanted()

    def _stop_unwanted(self) -> None:
        # a method of its own, so that no local of the watcher's loop keeps the last job (and its model) alive
        for job in [j for j in self._jobs.values() if j.state == "running"]:
            if not job.wanted():
                self._stop(job, "everyone who asked for it left")
            elif time.monotonic() - job.started - job.held > self.time_limit:
                self._stop(job, f"it ran longer than {minutes(self.time_limit)}, this server's limit for one job: "
                                "ask for less (the answer's window only, or fewer steps)")

    def _prune(self) -> None:
        """Drop the waiting jobs whose askers have all gone (closed their tab): they would be computed for nobody."""
        for job in [j for j in self._waiting if not j.wanted()]:
            self._drop(job)

    def _drop(self, job: Job) -> None:
        self._waiting.remove(job)
        del self._jobs[job.key]
        job.state = "dropped"

    def _start_workers(self) -> None:
        if self._threads:
            return
        threading.Thread(target=self._watch, name="rcqa-job-watch", daemon=True).start()
        lanes = ["main"] * self.workers + ["short"] * self.short_workers
        for index, lane in enumerate(lanes):
            thread = threading.Thread(target=self._serve, args=(lane,), name=f"rcqa-job-{lane}-{index}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, lane: str) -> None:
        lower_priority()
        while True:
            # no local keeps the last job: its error, re-raised in a page, holds that page's frames and their models
            self._run(self._next(lane))

    def _takes(self, lane: str, job: Job) -> bool:
        return lane == "main" or job.worst < self.short_below

    def _next(self, lane: str) -> Job:
        """The first job due that the lane takes, once there is one."""
        with self._changed:
            while (job := self._first_for(lane)) is None:
                self._changed.wait()
            self._waiting.remove(job)
            if lane == "short":  # the main lane may now take the short jobs still waiting
                self._short_busy += 1
                self._changed.notify_all()
            job.state, job.lane, job.started = "running", lane, time.monotonic()
            self._running += 1
            return job

    def _first_for(self, lane: str) -> Job | None:
        """The first job due that the lane takes; while a short-lane thread is free, the main lane leaves the short
        jobs to it, so that a long job asked a moment later never waits behind a short one the short lane runs."""
        self._prune()
        leaves_short = lane == "main" and self._short_busy < self.short_workers
        return next((job for job in self._waiting
                     if self._takes(lane, job) and not (leaves_short and self._takes("short", job))), None)

    def _run(self, job: Job) -> None:
        try:
            job.result = job.work(Running(job))
            state = "done"
        except Exception as error:  # handed to every asker, who shows it; a stopped job's says why it stopped
            job.error, state = Stopped(job.stopped_because) if job.stop.is_set() else error, "failed"
        with self._changed:
            job.state, job.ended, self._running = state, time.monotonic(), self._running - 1
            self._short_busy -= job.lane == "short"
            del self._jobs[job.key]
            job.finished.set()
            self._changed.notify_all()
