"""The queue's lanes: jobs in order of due, the threads that run them and the watcher that stops them
(rcqa.ui.jobs says how)."""
from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable
from typing import Any

from rcqa.ui.capacity import client_jobs, job_time_limit, lower_priority, minutes, session_jobs
from rcqa.ui.jobs.job import Busy, Cancelled, ClientBusy, Job, Running, SessionBusy, Stopped, Work, check_price

QUEUE_LIMIT = 32
WATCH_SECONDS = 0.5  # how often the queue looks for running jobs to stop


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
            elif job.running_seconds() > self.time_limit:
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
            job.state, job.lane = "running", lane
            job.started = job.since = time.monotonic()  # work that tells when it began (a worker's) restarts this
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
        job.pause()
        with self._changed:
            job.state, job.ended, self._running = state, time.monotonic(), self._running - 1
            self._short_busy -= job.lane == "short"
            del self._jobs[job.key]
            job.finished.set()
            self._changed.notify_all()
