"""What runs inside a worker process (rcqa.ui.worker starts it, and talks to it over a pipe).

A worker runs one task at a time, and, at the checkpoints of a long one (between its chunks of path points:
rcqa.attribution.memory.checkpoint), the short tasks the server sent meanwhile, each to its end, before the long
one goes on; those the long one read but did not reach a checkpoint for (it ended first, stopped at a progress
report or done), right after it. So a short job never waits for a long one to finish, and the process holds
one task's working memory at a time (the paused task keeps only its sums so far): no second process, with its own
torch and copy of the model, is needed for it. Short tasks run inside a long one only, never inside each other.

Messages are (kind, number, value), `number` naming the task. The server sends ("task", n, Task) and ("stop", n,
None); the worker answers ("started", n, None), ("progress", n, value), then ("result", n, value) or ("error", n,
exception). A task asked to stop raises Stopped at its next checkpoint or progress report; one asked before it
began ends as it begins, and a stopped long task ends at its checkpoint before the short ones waiting there run, so
that the process is free of it as soon as it can be."""
from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rcqa.attribution.memory import checkpoints
from rcqa.ui.jobs import Stopped


@dataclass(frozen=True)
class Task:
    """Heavy work another process can do: function(qa_model, *args, report) on the model named, whose fingerprint
    must be `fingerprint` (no model: "", and function gets None). The function is module-level, so that it pickles
    by name."""

    function: Callable[..., Any]
    model: str
    fingerprint: str
    device: str
    args: tuple = ()

    def run(self, qa_model, report: Callable[[Any], None]) -> Any:
        return self.function(qa_model, *self.args, report)


_SERVING = False  # whether this process is a worker (serve() runs in it)


def in_worker() -> bool:
    """Whether this process is a worker process, whose child processes are its tasks' alone."""
    return _SERVING


def serve(connection, threads: int, preload: str | None, gpu: str | None, tmp: str | None = None,
          environment: dict[str, str] | None = None) -> None:
    """The worker: the server's `environment` (a worker forked from the fork server has that server's), its GPU,
    its temporary folder `tmp` (its own and its Chromium's: the server removes it once the worker has ended, killed
    or not), idle priority before torch starts its threads (they inherit it), the preloaded model, then the tasks
    the server sends."""
    global _SERVING
    _SERVING = True
    if environment is not None:
        os.environ.clear()
        os.environ.update(environment)
    if gpu is not None:
        _bind_to(gpu)
    if tmp is not None:
        os.environ["TMPDIR"] = tmp
        tempfile.tempdir = None  # read TMPDIR again
    _idle_priority()
    import torch

    from rcqa.model import ModelLoadError, load_model

    torch.set_num_threads(threads)
    if preload is not None:
        try:
            load_model(preload)  # kept by load_model's own cache for the tasks that name it
        except ModelLoadError:  # the server shows why when it loads the same model
            pass
    worker = _Worker(connection, gpu)
    while True:
        try:
            kind, number, value = connection.recv()
        except EOFError:  # the server closed its end
            return
        if kind == "task":
            worker.run(number, value)
            worker.run_waiting()
        # else a stop for a task that ended before it came: nothing to stop


class _Worker:
    """The tasks under way in this process: the one running and, inside it, a short one; and the short ones sent
    while it runs."""

    def __init__(self, connection, gpu: str | None):
        self.connection, self.gpu = connection, gpu
        self.running: list[int] = []  # innermost last
        self.waiting: list[tuple[int, Task]] = []
        self.stopped: set[int] = set()

    def run(self, number: int, task: Task) -> None:
        """Run the task to its end, and send its result or its error. Grad mode is torch's default whatever the
        task it runs inside had set (inference mode, no_grad), which is this thread's state, not the model's."""
        import torch

        from rcqa.model import load_model

        self.running.append(number)
        try:
            self.connection.send(("started", number, None))
            self._read()  # a stop sent after the task, while it waited here
            self._check(number)
            device = "cuda" if self.gpu is not None and task.device.startswith("cuda") else task.device
            qa_model = load_model(task.model, device, fingerprint=task.fingerprint) if task.model else None
            with torch.inference_mode(False), torch.enable_grad(), checkpoints(self.checkpoint):
                result = task.run(qa_model, lambda progress: self.report(number, progress))
            self.connection.send(("result", number, result))
        except Exception as error:  # handed to the server, which shows it
            self.connection.send(("error", number, _picklable(error)))
        finally:
            self.running.pop()
            self.stopped.discard(number)

    def run_waiting(self) -> None:
        """The short tasks the last task read and ended before it ran (a stop, or its end, came before its next
        checkpoint), in the order they came: else each would wait here, unanswered, until its time limit."""
        while self.waiting:
            self.run(*self.waiting.pop(0))

    def report(self, number: int, progress: Any) -> None:
        """Progress of the innermost task, unless the server asked it to stop. No short task runs here: a whole
        passage reports each window while it may still hold other windows' graphs."""
        self._read()
        self._check(number)
        self.connection.send(("progress", number, progress))

    def checkpoint(self) -> None:
        """Between two chunks of the innermost task, where it holds no graph: end this task with Stopped if the
        server asked, else run the short tasks the server sent meanwhile (inside the outermost task only), and end
        it then if the server asked meanwhile."""
        self._read()
        self._check(self.running[-1])
        while self.waiting and len(self.running) == 1:
            self.run(*self.waiting.pop(0))
        self._check(self.running[-1])

    def _read(self) -> None:
        """What the server sent while the task computed: short tasks, and stops."""
        while self.connection.poll():
            kind, number, value = self.connection.recv()
            if kind == "task":
                self.waiting.append((number, value))
            elif number in self.running or any(number == sent for sent, _ in self.waiting):
                self.stopped.add(number)

    def _check(self, number: int) -> None:
        if number in self.stopped:
            raise Stopped("the job was stopped")


def _bind_to(gpu: str) -> None:
    """See only the GPU `gpu`, as "cuda", from here on. CUDA reads CUDA_VISIBLE_DEVICES once, when it initialises,
    which in a worker is after this (torch initialises CUDA lazily, on the first call that needs it): so
    everything the child does on "cuda" — the model, the engine's free-memory query, the allocator's context — is
    on its own GPU, with no device index passed through the library, and no context is opened on GPU 0. The
    server's device (say cuda:1, its $RCQA_DEVICE) is this GPU's "cuda" here, so $RCQA_DEVICE says "cuda" too."""
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    if os.environ.get("RCQA_DEVICE", "").startswith("cuda"):
        os.environ["RCQA_DEVICE"] = "cuda"


def _idle_priority() -> None:
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):  # not Linux: the lowest niceness instead
        try:
            os.nice(19)
        except OSError:
            pass


def _picklable(error: Exception) -> Exception:
    """The error itself if it survives pickling (the server re-raises its type), else a RuntimeError saying it."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # whatever fails to pickle
        return RuntimeError(f"{type(error).__name__}: {error}")
