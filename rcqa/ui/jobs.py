"""One bounded queue per process for heavy work (explanations), shared by every session of the app.

At most `workers` jobs run at once (what the device holds); the rest wait in order of when they are due: when
they arrived plus the seconds they are expected to take (Job; in arrival order where none is given). Identical requests (the
same key: the result cache's) are one job, computed once and handed to everyone who asked. A session has at
most one job waiting: asking for another withdraws it from the first. A job nobody waits for any more (every
asker cancelled or left) is dropped before it starts, and stopped while it runs; so is a job running past
`time_limit` seconds. Stopping sets the job's stop event, which its work watches (rcqa.ui.worker checks it between
layers and windows, and ends a worker process that does not stop in time). Past `limit` waiting jobs, new ones are
refused with Busy; so are those of a client (an address, which may hold many sessions) that already has
`per_client` jobs waiting.

Standard library only: the dashboard (rcqa.ui.queue) adapts it to Streamlit sessions.
"""
from __future__ import annotations

import bisect
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from rcqa.model import pick_device

WORKERS_ENV, THREADS_ENV, NICE_ENV = "RCQA_EXPLAIN_WORKERS", "RCQA_TORCH_THREADS", "RCQA_JOB_NICE"
BUDGET_ENV, TIME_LIMIT_ENV = "RCQA_JOB_BUDGET_S", "RCQA_JOB_TIME_LIMIT_S"
QUEUE_LIMIT = 32
CLIENT_LIMIT = 2  # jobs waiting for one client address, whatever its number of sessions
JOB_NICENESS = 10  # heavy work yields the cores to page scripts: a new visitor's page is drawn first
JOB_BUDGET_SECONDS = 300  # a job estimated to take longer is refused before it is queued (docs/serving.md)
JOB_TIME_LIMIT_SECONDS = 600  # a running job is stopped after this: twice the budget, for estimates that run long
WATCH_SECONDS = 0.5  # how often the queue looks for running jobs to stop


class Running:
    """What a job's work is handed while it runs: called with its progress (e.g. each finished layer), and `stop`,
    set when the job is to stop (everyone who asked left or cancelled, or it ran past its time limit)."""

    def __init__(self, job: Job):
        self._job, self.stop = job, job.stop

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


class ClientBusy(Busy):
    """This client address already has `waiting` jobs waiting, the most the queue holds for one."""

    def __init__(self, waiting: int):
        RuntimeError.__init__(self, f"{waiting} requests from your address are waiting, the most this server "
                                    "queues for one; wait for them or cancel one")
        self.waiting = waiting


class Cancelled(RuntimeError):
    """The ticket was cancelled (or replaced by a newer request of its session) before its job ran."""


class Stopped(RuntimeError):
    """The running job was stopped: its message says why, in a sentence for the visitor."""


def _seconds_setting(name: str, default: float) -> float:
    """A number of seconds the operator sets in $name; "0", "off" or "inf" for no limit."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    return math.inf if value in ("0", "off", "inf", "none") else float(value)


def job_budget() -> float:
    """The estimated seconds above which a job is refused before it is queued: $RCQA_JOB_BUDGET_S, else
    JOB_BUDGET_SECONDS (rcqa.attribution.cost estimates a job)."""
    return _seconds_setting(BUDGET_ENV, JOB_BUDGET_SECONDS)


def job_time_limit() -> float:
    """The seconds a job may run before it is stopped: $RCQA_JOB_TIME_LIMIT_S, else JOB_TIME_LIMIT_SECONDS."""
    return _seconds_setting(TIME_LIMIT_ENV, JOB_TIME_LIMIT_SECONDS)


def minutes(seconds: float) -> str:
    """A limit in words: "90 seconds", "10 minutes"."""
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


def job_gpus() -> list[str]:
    """The GPUs the app's jobs run on, each as a child process's CUDA_VISIBLE_DEVICES names it: those this process
    sees (its own CUDA_VISIBLE_DEVICES entries, else 0 … count − 1) where the default device (rcqa.model.pick_device)
    is CUDA, only the one $RCQA_DEVICE names where it names one (cuda:1), none where the jobs run on the CPU."""
    device = pick_device()
    if device.type != "cuda":
        return []
    count = torch.cuda.device_count()
    named = [entry.strip() for entry in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    visible = named[:count] if named else [str(index) for index in range(count)]
    return visible if device.index is None else visible[device.index:device.index + 1]


def default_workers(gpus: int = 0) -> int:
    """$RCQA_EXPLAIN_WORKERS, else one per GPU where the jobs run on `gpus` of them (one explanation already keeps a
    GPU busy with its batched path points), else one per four cores: on a CPU a second job would halve the speed of
    both, so more only where there are cores to spare."""
    if os.environ.get(WORKERS_ENV):
        return max(1, int(os.environ[WORKERS_ENV]))
    return gpus or max(1, (os.cpu_count() or 1) // 4)


def torch_threads(workers: int) -> int:
    """Torch threads for each of `workers` running jobs and for the server: the cores shared between the jobs and
    one core's worth for the server and answers ($RCQA_TORCH_THREADS overrides). More intra-op threads than free
    cores make every forward wait on descheduled threads: on 2 busy cores, tiny forwards ran 50 times slower with
    2 threads than with 1."""
    return int(os.environ.get(THREADS_ENV) or max(1, (os.cpu_count() or 1) // (workers + 1)))


def limit_torch_threads(workers: int) -> int:
    """Set this process's torch threads to torch_threads(workers), and return them."""
    threads = torch_threads(workers)
    torch.set_num_threads(threads)
    return threads


def lower_priority(niceness: int | None = None) -> None:
    """Raise the calling thread's niceness ($RCQA_JOB_NICE, default JOB_NICENESS; Linux schedules each thread on
    its own). With one torch thread (a 2-core machine) an explanation computes in the thread that runs it, so page
    scripts come first; torch's intra-op pool, where it has more threads, keeps its own priority."""
    wanted = int(os.environ.get(NICE_ENV, JOB_NICENESS)) if niceness is None else niceness
    try:
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), max(current, wanted))
    except (OSError, AttributeError):  # not Linux-like: leave the priority as it is
        pass


class Job:
    """Work for one key, due at `due`: when it arrived plus its expected seconds. Jobs run in order of due, so a
    long job lets the short ones that arrive while it waits go first, but none that arrives after it is due: no job
    waits for ever, and a long one holds up a short one by at most its own time."""

    def __init__(self, key: str, work: Work, due: float = 0.0):
        self.key, self.work, self.due = key, work, due
        self.askers: dict[str, Callable[[], bool]] = {}  # session → is it still there?
        self.clients: dict[str, str] = {}  # session → its client address, where known
        self.state = "waiting"  # → running → done | failed, or waiting → dropped
        self.progress: Any = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self.stop = threading.Event()  # set to stop it while it runs; stopped_because says why
        self.stopped_because = ""
        self.started = math.inf  # time.monotonic() when it started running

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


class JobQueue:
    """Jobs in arrival order, run by `workers` threads started on the first submit, and watched by one more, which
    stops the running jobs nobody waits for or that ran past `time_limit` seconds (job_time_limit() by default)."""

    def __init__(self, workers: int = 1, limit: int = QUEUE_LIMIT, per_client: int = CLIENT_LIMIT,
                 time_limit: float | None = None):
        self.workers, self.limit, self.per_client = workers, limit, per_client
        self.time_limit = job_time_limit() if time_limit is None else time_limit
        self._waiting: list[Job] = []  # in the order they run: by Job.due
        self._jobs: dict[str, Job] = {}  # waiting or running, by key
        self._running = 0
        self._changed = threading.Condition()
        self._threads: list[threading.Thread] = []

    def submit(self, key: str, session: str, work: Work, alive: Callable[[], bool] = lambda: True,
               client: str | None = None, estimate: float = 0.0) -> Ticket:
        """Claim the job for key (joining one waiting or running, else queueing `work`, expected to take `estimate`
        seconds) for session, of client (its address, None where unknown); any other job the session has waiting
        loses its claim. Busy if a new job would pass the limit, ClientBusy if the client's own."""
        with self._changed:
            self._prune()
            job = self._jobs.get(key)
            if job is None:
                if len(self._waiting) >= self.limit:
                    raise Busy(len(self._waiting))
                if client is not None and (mine := self._client_waiting(client, session)) >= self.per_client:
                    raise ClientBusy(mine)
                job = self._jobs[key] = Job(key, work, time.monotonic() + estimate)
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

    def _client_waiting(self, client: str, session: str) -> int:
        """Waiting jobs asked for by the client's sessions, less the one `session` is about to withdraw."""
        return sum(1 for job in self._waiting if any(c == client for s, c in job.clients.items() if s != session))

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
            elif time.monotonic() - job.started > self.time_limit:
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
        if not self._threads:
            threading.Thread(target=self._watch, name="rcqa-job-watch", daemon=True).start()
        while len(self._threads) < self.workers:
            thread = threading.Thread(target=self._serve, name=f"rcqa-job-{len(self._threads)}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self) -> None:
        lower_priority()
        while True:
            # no local keeps the last job: its error, re-raised in a page, holds that page's frames and their models
            self._run(self._next())

    def _next(self) -> Job:
        with self._changed:
            self._prune()
            while not self._waiting:
                self._changed.wait()
                self._prune()
            job = self._waiting.pop(0)
            job.state, self._running, job.started = "running", self._running + 1, time.monotonic()
            return job

    def _run(self, job: Job) -> None:
        try:
            job.result = job.work(Running(job))
            state = "done"
        except Exception as error:  # handed to every asker, who shows it; a stopped job's says why it stopped
            job.error, state = Stopped(job.stopped_because) if job.stop.is_set() else error, "failed"
        with self._changed:
            job.state, self._running = state, self._running - 1
            del self._jobs[job.key]
            job.finished.set()
            self._changed.notify_all()
