"""Heavy work in processes of their own, scheduled as idle, so that a server's pages never wait behind it.

An explanation runs for seconds as many short torch calls, holding the interpreter lock between them. In the
server's process it shares that lock with every page script and with the websocket loop, and a thread lowered in
priority is descheduled while it holds the lock, which stalls them all. A child process has an interpreter of its
own, and as SCHED_IDLE it runs only on cores nothing else wants: a new visitor's page takes them at once.

Children are started with `spawn` (forking a threaded server is unsafe, and CUDA cannot be forked), load each model
they are asked for by name once and check its fingerprint against the server's, and report progress over their
pipe. On a machine with GPUs each child is bound to one, and sees only that one. A child that dies (killed, out of
memory) fails its job with WorkerDied and is replaced, on the same GPU, for the next one.

A running job is stopped (rcqa.ui.jobs: cancelled, or past its time limit) through an event the child shares: it
checks it each time it reports progress (after every layer, and every window of a whole passage), and ends its
task with Stopped. A child that has not answered STOP_GRACE_SECONDS later (in a long step, or a task that reports
nothing) is killed and replaced, so the next job starts either way.
"""
from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rcqa.ui.jobs import Stopped

PROCESS_ENV = "RCQA_JOB_PROCESSES"  # "0": run heavy jobs in the server's own threads instead
STOP_GRACE_SECONDS = 3.0  # a child asked to stop that has not answered by then is killed
POLL_SECONDS = 0.1  # how often a running job's stop event is looked at while the child works


class WorkerDied(RuntimeError):
    """The worker process ended (killed, or out of memory) while it ran a job."""


@dataclass(frozen=True)
class Task:
    """Heavy work another process can do: function(qa_model, *args, report) on the model named, whose fingerprint
    must be `fingerprint`. The function is module-level, so that it pickles by name."""

    function: Callable[..., Any]
    model: str
    fingerprint: str
    device: str
    args: tuple = ()

    def run(self, qa_model, report: Callable[[Any], None]) -> Any:
        return self.function(qa_model, *self.args, report)


def processes_enabled() -> bool:
    return os.environ.get(PROCESS_ENV, "1") != "0"


class WorkerProcess:
    """One child process that runs one Task at a time, bound to the GPU `gpu` (as CUDA_VISIBLE_DEVICES names it)
    where one is given."""

    def __init__(self, threads: int, preload: str | None = None, gpu: str | None = None):
        self.gpu = gpu
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        self._stop = context.Event()  # set: the child ends its task at its next progress report
        self._process = context.Process(target=_serve, args=(child, threads, preload, gpu, self._stop),
                                        name="rcqa-worker", daemon=True)
        self._process.start()
        child.close()
        self._broken = False

    def alive(self) -> bool:
        return not self._broken and self._process.is_alive()

    def run(self, task: Task, report: Callable[[Any], None], stop: threading.Event | None = None) -> Any:
        """The task's result, computed in the child; its error, raised here; progress handed to report. Once
        `stop` is set the child is asked to stop, and killed if it has not within STOP_GRACE_SECONDS: Stopped."""
        self._stop.clear()
        self._talk(self._connection.send, task)
        stopping = math.inf  # when the child was asked to stop
        while True:
            if stop is not None and stop.is_set() and stopping == math.inf:
                self._stop.set()
                stopping = time.monotonic()
            if time.monotonic() - stopping > STOP_GRACE_SECONDS:
                self._kill()
                raise Stopped("the job was stopped")
            if not self._talk(self._connection.poll, POLL_SECONDS):
                continue
            kind, value = self._talk(self._connection.recv)
            if kind == "progress":
                report(value)
            elif kind == "result":
                return value
            else:
                raise value

    def _kill(self) -> None:
        """End the child now (it is replaced for the next job)."""
        self._broken = True
        self._process.kill()
        self._process.join(timeout=5)

    def _talk(self, action: Callable, *message) -> Any:
        try:
            return action(*message)
        except (EOFError, OSError) as error:  # the child's end closed: it has died, or is dying
            self._broken = True
            raise WorkerDied("the worker process stopped while it ran the job; it is restarted for the next "
                             "one") from error

    def close(self) -> None:
        self._connection.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()


class WorkerProcesses:
    """`size` worker processes, started at once, so that their imports (and the model named `preload`, loaded
    on the device it chooses by default) are done before the first job; each run borrows the idle one that has
    waited longest, so that jobs take turns on the workers. Given `gpus` (rcqa.ui.jobs.job_gpus), worker i is bound
    to gpus[i % len(gpus)]: one worker per GPU by default, jobs spread over them. The job queue runs at most `size`
    jobs at once, so none waits here."""

    def __init__(self, size: int, threads: int, preload: str | None = None, gpus: Sequence[str] = ()):
        self.threads, self.preload = threads, preload
        self._idle: queue.SimpleQueue[WorkerProcess] = queue.SimpleQueue()
        for index in range(size):
            self._idle.put(WorkerProcess(threads, preload, gpus[index % len(gpus)] if gpus else None))

    def run(self, task: Task, report: Callable[[Any], None], stop: threading.Event | None = None) -> Any:
        worker = self._idle.get()
        try:
            return worker.run(task, report, stop)
        finally:
            if not worker.alive():
                worker.close()
                worker = WorkerProcess(self.threads, self.preload, worker.gpu)
            self._idle.put(worker)


def _serve(connection, threads: int, preload: str | None, gpu: str | None, stop) -> None:
    """The child: its GPU, idle priority before torch starts its threads (they inherit it), the preloaded model,
    then one task at a time, each ended with Stopped at its next progress report once `stop` is set."""
    if gpu is not None:
        _bind_to(gpu)
    _idle_priority()
    import torch

    from rcqa.model import ModelLoadError, load_model

    torch.set_num_threads(threads)
    if preload is not None:
        try:
            load_model(preload)  # kept by load_model's own cache for the tasks that name it
        except ModelLoadError:  # the server shows why when it loads the same model
            pass
    while True:
        try:
            task = connection.recv()
        except EOFError:  # the server closed its end
            return
        try:
            device = "cuda" if gpu is not None and task.device.startswith("cuda") else task.device
            qa_model = load_model(task.model, device, fingerprint=task.fingerprint)
            result = task.run(qa_model, lambda progress: _report(connection, stop, progress))
            connection.send(("result", result))
        except Exception as error:  # handed to the server, which shows it
            connection.send(("error", _picklable(error)))


def _report(connection, stop, progress: Any) -> None:
    """Hand progress to the server, or end the task if the server asked it to stop."""
    if stop.is_set():
        raise Stopped("the job was stopped")
    connection.send(("progress", progress))


def _bind_to(gpu: str) -> None:
    """See only the GPU `gpu`, as "cuda", from here on. CUDA reads CUDA_VISIBLE_DEVICES once, when it initialises,
    which in a spawned child is after this (torch initialises CUDA lazily, on the first call that needs it): so
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


# --- what the app sends: module-level, so that they pickle by name -----------------------------------------

def explanation(qa_model, example, settings, cache, report: Callable[[Any], None]):
    """(result, came_from_cache) for the dashboard's explanation, through the disk result cache (a ResultCache)."""
    from rcqa.attribution.cache import cached_explain

    return cached_explain(qa_model, example, settings, cache, report)


def answer(qa_model, passage, question, report: Callable[[Any], None]):
    """The model's answer (rcqa.qa.answer) to a passage too long to answer in the page thread."""
    from rcqa.qa import answer as answer_question

    return answer_question(qa_model, passage, question)


def comparison(qa_model, example, settings, protocol, report: Callable[[Any], None]):
    """The methods' comparison (rcqa.faithfulness.compare) for the dashboard; it reports no progress."""
    from rcqa.faithfulness.compare import compare

    return compare(qa_model, example, protocol=protocol, settings=settings)


def lens(qa_model, example, report: Callable[[Any], None]):
    """The answer lens (rcqa.lens) of the example."""
    from rcqa.lens import answer_lens

    return answer_lens(qa_model, example)


def contrast_margins(qa_model, result, report: Callable[[Any], None]):
    """The lens's margin of the explained span over the contrast's foil per layer (rcqa.lens.contrast)."""
    from rcqa.lens.contrast import contrast_margins as margins

    return margins(qa_model, result)


def knockouts(qa_model, result, k, draws, baseline, aggregation, report: Callable[[Any], None]):
    """The interventions (rcqa.lens.interventions) on an explanation's top, bottom and random words."""
    from rcqa.lens.interventions import intervene

    return intervene(qa_model, result, k=k, draws=draws, baseline=baseline, aggregation=aggregation)


def projection(qa_model, vectors, method, report: Callable[[Any], None]):
    """A 2-D map (rcqa.analysis.projection) of one layer's token vectors; the model is not used."""
    from rcqa.analysis.projection import project

    return project(vectors, method)


def analysis(qa_model, name, result, settings, aggregation, k, cache, report: Callable[[Any], None]):
    """One registered analysis of an explanation (rcqa.analysis_run); an analysis of two methods explains the question with
    the other method first, through the disk result cache (a ResultCache)."""
    from rcqa.analysis_run import run_analysis

    return run_analysis(name, qa_model, result, settings, aggregation, k, cache=cache)
