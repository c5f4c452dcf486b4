"""One worker process as the server sees it: the tasks sent to it, followed over its pipe, and how a task in it is
stopped without harming the others it hosts.

A stop is a message the child reads at its task's next checkpoint or progress report (rcqa.ui.child). The run()
that asked for the task gives up at once, with Stopped: its visitor waits for nothing, and the task's result, if it
still comes, is dropped. What then happens to the process depends on what else computes in it:

- Another task computes in it too (a short task inside a long one): the stopped task runs on to its next checkpoint,
  or to its end, and the process is never killed for it. Killing it ended every other task there, which was then
  started again from nothing (issue 56: four Cancels of short jobs made another visitor's 30 s job start 5 times).
- Every task computing in it was asked to stop (one alone, usually) and none has ended STOP_GRACE_SECONDS later:
  the process is killed, which harms no one, and replaced for the next job.

Until the stopped tasks end, the process takes no new borrower (takes_borrowers), so no new job waits behind work
nobody wants. A task sent and still waiting in the child for a checkpoint has nothing in the process: if the process
ends, it goes again elsewhere (Displaced). One that had begun is reported to its visitor (WorkerDied)."""
from __future__ import annotations

import atexit
import contextlib
import itertools
import multiprocessing
import multiprocessing.util  # registers its atexit handler now, so that _end_all's (registered later) runs first
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Protocol

from rcqa.ui.child import Task, serve
from rcqa.ui.jobs import Stopped

STOP_GRACE_SECONDS = 3.0  # a process all of whose tasks were asked to stop, and none did by then, is killed
POLL_SECONDS = 0.1  # how often a running job's stop event, and a process's stopped tasks, are looked at
_NUMBERS = itertools.count()  # each task sent to a child is named by one
EXITING = threading.Event()  # set as the interpreter exits (_end_all)
# What a worker runs, imported once in multiprocessing's fork server, from which each worker is then forked ready to
# load its model: not importing torch and transformers again, about 3 s a worker on 2 cores (a queue's first
# worker pays it once, in the fork server). That server is a fresh interpreter started, not forked, from this one,
# so the threaded server is never forked; and importing these touches no GPU (torch opens CUDA lazily), so the
# CUDA_VISIBLE_DEVICES a worker sets first thing still picks its GPU.
WORKER_MODULES = ["rcqa.ui.child", "rcqa.ui.worker.tasks", "rcqa.model"]


def worker_context() -> multiprocessing.context.ForkServerContext | multiprocessing.context.SpawnContext:
    """How workers are started: forked from the fork server, which has imported WORKER_MODULES; spawned where there
    is no fork server (Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(WORKER_MODULES)
    return context


class WorkerDied(RuntimeError):
    """The worker process ended (killed, or out of memory) while it ran a job."""


class Displaced(WorkerDied):
    """The worker process ended before it began this task: the task lost nothing and goes again on another."""


class Timing(Protocol):
    """Told when a task waits (for a worker, or inside another task for its checkpoint), when it began in its
    child, and for how long it was held (a short task run inside it)."""

    def waiting(self) -> None: ...

    def began(self) -> None: ...

    def held(self, seconds: float) -> None: ...


class WorkerProcess:
    """One child process that runs the tasks sent to it (rcqa.ui.child: one at a time, and short ones inside a long
    one), bound to the GPU `gpu` (as CUDA_VISIBLE_DEVICES names it) where one is given. One thread reads what the
    child sends and hands it to the run() call waiting for that task; another kills the child once every task it
    computes was asked to stop and none did within the grace. `ended` is called once the child has ended."""

    def __init__(self, threads: int, preload: str | None = None, gpu: str | None = None,
                 ended: Callable[[], None] | None = None):
        self.gpu = gpu
        context = worker_context()
        self._connection, child = context.Pipe()
        self._tmp = tempfile.mkdtemp(prefix="rcqa-worker-")  # what a killed child's Chromium leaves is removed
        # the environment as it is now, not as the fork server found it when it started
        arguments = (child, threads, preload, gpu, self._tmp, dict(os.environ))
        self._process = context.Process(target=serve, args=arguments, name="rcqa-worker", daemon=True)
        self._process.start()
        self.pid: int | None = self._process.pid
        child.close()
        self._broken = False
        self._ended = ended  # told when the child ends, unless close() ended it
        self._closing = False
        self._closed = threading.Event()
        self._sending = threading.Lock()
        self._state = threading.Lock()  # over the records below, which the reader and run() calls change
        self._inboxes: dict[int, queue.SimpleQueue] = {}  # by task followed by a run() call: what the child sent
        self._pending: set[int] = set()  # sent, and not ended in the child
        self._computing: list[int] = []  # begun in the child and not ended, innermost last
        self._stopping: set[int] = set()  # pending, and asked to stop
        threading.Thread(target=self._read, name="rcqa-worker-reader", daemon=True).start()
        threading.Thread(target=self._watch, name="rcqa-worker-watch", daemon=True).start()
        _LIVE.add(self)

    @property
    def tasks(self) -> int:
        """The run() calls under way on this child."""
        return len(self._inboxes)

    def alive(self) -> bool:
        return not (self._broken or self._closing) and self._process.is_alive()

    def takes_borrowers(self) -> bool:
        """Alive and computing no task it was asked to stop: a new task sent here would wait for one nobody wants."""
        with self._state:
            stopped = any(number in self._stopping for number in self._computing)
        return not stopped and self.alive()

    def run(self, task: Task, report: Callable[[Any], None], stop: threading.Event | None = None,
            timing: Timing | None = None) -> Any:
        """The task's result, computed in the child; its error, raised here; progress handed to report, and its
        start and pauses to timing. Once `stop` is set, Stopped at once: the child is asked to stop the task (see
        the module's docstring for what becomes of it)."""
        number = next(_NUMBERS)
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        with self._state:
            self._inboxes[number] = inbox
            self._pending.add(number)
        try:
            self._send(("task", number, task))
            return self._follow(number, inbox, report, stop, timing)
        finally:
            with self._state:
                del self._inboxes[number]

    def _follow(self, number: int, inbox: queue.SimpleQueue, report: Callable[[Any], None],
                stop: threading.Event | None, timing: Timing | None) -> Any:
        last = time.monotonic()
        while True:
            now = time.monotonic()
            if timing is not None and self._holding(number):  # paused for a short task inside it
                timing.held(now - last)
            last = now
            if stop is not None and stop.is_set():
                self._ask_to_stop(number)
                raise Stopped("the job was stopped")
            try:
                kind, value = inbox.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if kind == "started":
                if timing is not None:
                    timing.began()
            elif kind == "progress":
                report(value)
            elif kind == "result":
                return value
            elif kind == "error":
                raise value
            else:
                raise self._died(number)

    def _ask_to_stop(self, number: int) -> None:
        with self._state:
            if number not in self._pending:  # it ended as the stop came
                return
            self._stopping.add(number)
        try:
            self._send(("stop", number, None))
        except WorkerDied:  # the child has ended, and the task with it
            pass

    def _holding(self, number: int) -> bool:
        """Whether the child runs a short task inside this one."""
        with self._state:
            return number in self._computing and self._computing[-1] != number

    def _read(self) -> None:
        """Hand each message from the child to the run() call of its task (a task nobody follows any more, stopped,
        has its result dropped); on the child's end, tell them all."""
        while True:
            try:
                kind, number, value = self._connection.recv()
            except (EOFError, OSError):  # the child has died, or the server closed its end
                self._broken = True
                with self._state:
                    inboxes = list(self._inboxes.values())
                for inbox in inboxes:
                    inbox.put(("died", None))
                self._closed.set()
                if self._ended is not None and not self._closing and not EXITING.is_set():
                    self._ended()
                return
            with self._state:
                if kind == "started":
                    self._computing.append(number)
                elif kind in ("result", "error"):
                    if number in self._computing:
                        self._computing.remove(number)
                    self._pending.discard(number)
                    self._stopping.discard(number)
                waiting = self._inboxes.get(number)
            if waiting is not None:
                waiting.put((kind, value))

    def _watch(self) -> None:
        """Kill the child once every task it computes was asked to stop and none has ended STOP_GRACE_SECONDS
        later: it then serves nobody. The grace begins again whenever a task in it ends, so a long task stopped
        while a short one ran inside it gets its whole grace once the short one is done."""
        seen: tuple[int, ...] = ()
        since = time.monotonic()
        while not self._closed.wait(POLL_SECONDS):
            with self._state:
                computing = tuple(self._computing)
                stuck = bool(computing) and all(number in self._stopping for number in computing)
            now = time.monotonic()
            if computing != seen:
                seen, since = computing, now
            if stuck and now - since > STOP_GRACE_SECONDS:
                self._kill()
                return

    def _send(self, message: tuple) -> None:
        try:
            if self._broken:
                raise EOFError
            with self._sending:
                self._connection.send(message)
        except (EOFError, OSError) as error:  # the child's end closed: it has died, or is dying
            self._broken = True
            raise self._died(message[1]) from error

    def _died(self, number: int) -> WorkerDied:
        """What task `number` fails with now that the child has ended: Displaced where it had not begun there."""
        with self._state:
            begun = number in self._computing
        if not begun:
            return Displaced("the worker process ended before it began this job")
        return WorkerDied("the worker process stopped while it ran the job; it is restarted for the next one")

    def _kill(self) -> None:
        self._broken = True
        self._process.kill()
        self._process.join(timeout=5)

    def close(self) -> None:
        """End the child: its pipe closed, then killed if it has not ended within 5 s; then its temporary folder
        removed, with whatever still runs from it."""
        self._closing = True
        self._closed.set()
        self._connection.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=5)
        if not EXITING.is_set():
            with contextlib.suppress(ValueError):  # its descriptors now, not when a traceback holding this is freed
                self._process.close()
        threading.Thread(target=_remove, args=(self._tmp,), name="rcqa-worker-tmp", daemon=True).start()

    def end_now(self) -> None:
        """Kill the child and remove its temporary folder, as the server exits."""
        self._closing = True
        with contextlib.suppress(ValueError):  # closed already: ended
            self._process.kill()
            self._process.join(timeout=2)
        _remove(self._tmp, tries=3)


_LIVE: weakref.WeakSet[WorkerProcess] = weakref.WeakSet()  # every worker this process started


@atexit.register
def _end_all() -> None:
    """As the interpreter exits, before multiprocessing ends its children (atexit runs the last registered first):
    no child ended from now on is replaced, and each is ended here with its temporary folder."""
    EXITING.set()
    for worker in list(_LIVE):
        worker.end_now()


def _remove(folder: str, tries: int = 30) -> None:
    """Remove the folder, with the processes that name it (a killed worker's Chromium, its profile there, ends with
    its pipe a moment after the worker, and writes there meanwhile), until neither is left, a while at most."""
    for _ in range(tries):
        for pid in _processes_naming(folder):  # first, so that none writes there again once it is removed
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.exists(folder) and not _processes_naming(folder):
            return
        time.sleep(0.5)


def _processes_naming(folder: str) -> list[int]:
    """The processes whose command line names `folder` (Linux's /proc; none found elsewhere)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                        if folder.encode() in cmdline.read():
                            found.append(int(entry))
                except OSError:  # ended, or not ours to read
                    continue
    return found
