"""Heavy work in processes of their own, scheduled as idle, so that a server's pages never wait behind it.

An explanation runs for seconds as many short torch calls, holding the interpreter lock between them. In the
server's process it shares that lock with every page script and with the websocket loop, and a thread lowered in
priority is descheduled while it holds the lock, which stalls them all. A child process has an interpreter of its
own, and as SCHED_IDLE it runs only on cores nothing else wants: a new visitor's page takes them at once.

Children are started with `spawn` (forking a threaded server is unsafe, and CUDA cannot be forked), load each model
they are asked for by name once and check its fingerprint against the server's, and report progress over their
pipe (rcqa.ui.child runs in them). On a machine with GPUs each child is bound to one, and sees only that one. A
child that dies (killed, out of memory) fails its jobs with WorkerDied and is replaced, on the same GPU, for the
next one.

A short job (the queue's short lane) that finds every child busy is sent to the busy child with the fewest tasks,
which runs it at the long task's next checkpoint (between chunks of path points, a few seconds apart) and then
goes on with the long one: the long job is held meanwhile, and its time limit does not count that. Nor does a
job's wait here for a worker (a main-lane job whose idle worker a short job took first): its clock starts when its
worker starts it.

A running job is stopped (rcqa.ui.jobs: cancelled, or past its time limit) by a message the child reads at its
task's next checkpoint, where it ends the task with Stopped. A child that has not answered STOP_GRACE_SECONDS later
(in a long step, or a task with no checkpoints) is killed and replaced, so the next job starts either way; a long
task holding a short one inside it is given its grace once the short one is done. A short job sent to a child that
is killed so (it waited there for the long task's next checkpoint) had no part in it: it goes again at once, on the
next worker it borrows, as the first of its lane. Chunks are sized by time as well as memory
(rcqa.attribution.engine.chunk_size: rcqa.attribution.memory.CHECKPOINT_SECONDS), so a checkpoint usually comes
within the grace and nothing is killed.
"""
from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rcqa.ui.child import Task, serve
from rcqa.ui.jobs import Stopped

if TYPE_CHECKING:  # the tasks import what they run when they run: a worker starts light
    from rcqa.qa import Reading
    from rcqa.types import Example
    from rcqa.types.settings import ExplainSettings
    from rcqa.ui.drawn import HeatmapView

PROCESS_ENV = "RCQA_JOB_PROCESSES"  # "0": run heavy jobs in the server's own threads instead
STOP_GRACE_SECONDS = 3.0  # a child asked to stop that has not answered by then is killed
POLL_SECONDS = 0.1  # how often a running job's stop event is looked at while the child works
_NUMBERS = itertools.count()  # each task sent to a child is named by one


class WorkerDied(RuntimeError):
    """The worker process ended (killed, or out of memory) while it ran a job."""


class Displaced(WorkerDied):
    """The worker process was killed for another task (stopped, and past its grace) while this one waited in it."""


class Timing(Protocol):
    """Told when a task waits for a worker, when it began in its child, and for how long it was held (a short task
    run inside it)."""

    def waiting(self) -> None: ...

    def began(self) -> None: ...

    def held(self, seconds: float) -> None: ...


def processes_enabled() -> bool:
    return os.environ.get(PROCESS_ENV, "1") != "0"


class WorkerProcess:
    """One child process that runs the tasks sent to it (rcqa.ui.child: one at a time, and short ones inside a long
    one), bound to the GPU `gpu` (as CUDA_VISIBLE_DEVICES names it) where one is given. One thread reads what the
    child sends and hands it to the run() call waiting for that task."""

    def __init__(self, threads: int, preload: str | None = None, gpu: str | None = None):
        self.gpu = gpu
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        self._process = context.Process(target=serve, args=(child, threads, preload, gpu), name="rcqa-worker",
                                        daemon=True)
        self._process.start()
        child.close()
        self._broken = False
        self._killed_for: int | None = None  # the task whose stop killed the child, if one did
        self._sending = threading.Lock()
        self._inboxes: dict[int, queue.SimpleQueue] = {}  # by task: what the child sent about it
        self._computing: list[int] = []  # the tasks the child has started and not ended, innermost last
        threading.Thread(target=self._read, name="rcqa-worker-reader", daemon=True).start()

    @property
    def tasks(self) -> int:
        """The run() calls under way on this child."""
        return len(self._inboxes)

    def alive(self) -> bool:
        return not self._broken and self._process.is_alive()

    def run(self, task: Task, report: Callable[[Any], None], stop: threading.Event | None = None,
            timing: Timing | None = None) -> Any:
        """The task's result, computed in the child; its error, raised here; progress handed to report, and its
        start and pauses to timing. Once `stop` is set the child is asked to stop the task, and killed if it has
        not within STOP_GRACE_SECONDS: Stopped."""
        number = next(_NUMBERS)
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._inboxes[number] = inbox
        try:
            self._send(("task", number, task))
            return self._follow(number, inbox, report, stop, timing)
        finally:
            del self._inboxes[number]

    def _follow(self, number: int, inbox: queue.SimpleQueue, report: Callable[[Any], None],
                stop: threading.Event | None, timing: Timing | None) -> Any:
        stopping = math.inf  # when the child was asked to stop the task
        last = time.monotonic()
        while True:
            now = time.monotonic()
            if self._holding(number):  # a short task runs inside this one: it is paused, its grace not yet begun
                if timing is not None:
                    timing.held(now - last)
                if stopping != math.inf:
                    stopping = now
            last = now
            if stop is not None and stop.is_set() and stopping == math.inf:
                self._send(("stop", number, None))
                stopping = now
                if number not in self._computing:  # still waiting in the child, which drops it when it comes to it
                    raise Stopped("the job was stopped")
            if now - stopping > STOP_GRACE_SECONDS:
                self._kill(number)
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

    def _holding(self, number: int) -> bool:
        """Whether the child runs a short task inside this one."""
        computing = list(self._computing)
        return number in computing and computing[-1] != number

    def _read(self) -> None:
        """Hand each message from the child to the run() call of its task; on the child's end, tell them all."""
        while True:
            try:
                kind, number, value = self._connection.recv()
            except (EOFError, OSError):  # the child has died, or the server closed its end
                self._broken = True
                for inbox in list(self._inboxes.values()):
                    inbox.put(("died", None))
                return
            if kind == "started":
                self._computing.append(number)
            elif kind in ("result", "error") and number in self._computing:
                self._computing.remove(number)
            if (waiting := self._inboxes.get(number)) is not None:
                waiting.put((kind, value))

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
        """What task `number` fails with now that the child has ended: Displaced where it was killed for another."""
        if self._killed_for not in (None, number):
            return Displaced("the worker process was ended for another job before it ran this one")
        return WorkerDied("the worker process stopped while it ran the job; it is restarted for the next one")

    def _kill(self, number: int) -> None:
        """End the child now, for task `number` (it is replaced for the next job)."""
        self._broken, self._killed_for = True, number
        self._process.kill()
        self._process.join(timeout=5)

    def close(self) -> None:
        self._connection.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()


class WorkerProcesses:
    """`size` worker processes, started at once, so that their imports (and the model named `preload`, loaded
    on the device it chooses by default) are done before the first job; each run borrows the idle one that has
    waited longest, so that jobs take turns on the workers, and a short run (the queue's short lane) that finds
    none idle goes inside the busy one with the fewest tasks. Given `gpus` (rcqa.ui.capacity.job_gpus), worker i is
    bound to gpus[i % len(gpus)]: one worker per GPU by default, jobs spread over them. The job queue's main lane
    runs at most `size` jobs at once, so one of those waits here only for a short job that took an idle worker."""

    def __init__(self, size: int, threads: int, preload: str | None = None, gpus: Sequence[str] = ()):
        self.threads, self.preload = threads, preload
        self._changed = threading.Condition()
        self._idle = [WorkerProcess(threads, preload, gpus[index % len(gpus)] if gpus else None)
                      for index in range(size)]  # the one idle longest first
        self._lent: dict[WorkerProcess, int] = {}  # busy workers, and the runs each is lent to

    def run(self, task: Task, report: Callable[[Any], None], stop: threading.Event | None = None,
            short: bool = False, timing: Timing | None = None) -> Any:
        """The task's result (WorkerProcess.run). A run Displaced from its worker goes again at once: it is still
        the first of its lane, whose thread holds it."""
        while True:
            worker = self._borrow(short, stop, timing)
            try:
                return worker.run(task, report, stop, timing)
            except Displaced:
                continue
            finally:
                self._give_back(worker)

    def _borrow(self, short: bool, stop: threading.Event | None, timing: Timing | None) -> WorkerProcess:
        """A worker for the run: the idle one idle longest, or for a short run the busy one with the fewest tasks.
        A run that has to wait tells timing (its time limit does not count the wait), and gives up with Stopped
        once `stop` is set."""
        with self._changed:
            if not self._free_for(short) and timing is not None:
                timing.waiting()
            while not self._free_for(short):
                if stop is not None and stop.is_set():
                    raise Stopped("the job was stopped")
                self._changed.wait(POLL_SECONDS)
            worker = self._idle.pop(0) if self._idle else min(self._hosts(), key=lambda busy: busy.tasks)
            self._lent[worker] = self._lent.get(worker, 0) + 1
            return worker

    def _free_for(self, short: bool) -> bool:
        return bool(self._idle or (short and self._hosts()))

    def _hosts(self) -> list[WorkerProcess]:
        return [worker for worker in self._lent if worker.alive()]

    def _give_back(self, worker: WorkerProcess) -> None:
        with self._changed:
            self._lent[worker] -= 1
            if self._lent[worker]:
                return
            del self._lent[worker]
            if not worker.alive():
                worker.close()
                worker = WorkerProcess(self.threads, self.preload, worker.gpu)
            self._idle.append(worker)
            self._changed.notify_all()


# --- what the app sends: module-level, so that they pickle by name -----------------------------------------

@dataclass(frozen=True)
class ExplanationRequest:
    """One explanation as the page worked it out before queueing it: the example and settings, their result cache
    key (ResultCache.key), the page's reading of the example (rcqa.qa.read: its answer and logits, so the worker
    runs no windows to answer it again; None where the page had none), and the heatmap tab the page draws first
    (an rcqa.ui.drawn.HeatmapView, drawn here; None: none)."""

    example: Example
    settings: ExplainSettings
    key: str | None = None
    reading: Reading | None = None
    first_view: HeatmapView | None = None


def explanation(qa_model, request: ExplanationRequest, cache, report: Callable[[Any], None]):
    """(result, came_from_cache, its first views) for the dashboard's explanation, through the disk result cache (a
    ResultCache) under the request's key, from its reading: with the first view drawn here, so that the server only
    sends it (rcqa.ui.drawn.ResultCharts; None where no view was given)."""
    from rcqa.attribution.cache import cached_explain

    result, hit = cached_explain(qa_model, request.example, request.settings, cache, report, key=request.key,
                                 reading=request.reading)
    return result, hit, None if request.first_view is None else request.first_view.draw(result)


def reading(qa_model, passage, question, report: Callable[[Any], None]):
    """The model's answer with its logits (rcqa.qa.read) to a passage too long to answer in the page thread."""
    from rcqa.qa import read

    return read(qa_model, passage, question)


def _told(report: Callable[[Any], None]) -> Callable[[float, str], None]:
    """A library function's progress (share done, where it is) as one report: (share, where)."""
    return lambda share, where: report((share, where))


def comparison(qa_model, example, settings, protocol, report: Callable[[Any], None]):
    """The methods' comparison (rcqa.faithfulness.compare) for the dashboard; each method and each batch of
    re-answers done is a progress report, where a stopped job ends."""
    from rcqa.faithfulness.compare import compare

    return compare(qa_model, example, protocol=protocol, settings=settings, progress=_told(report))


def sanity(qa_model, example, settings, methods, report: Callable[[Any], None]):
    """The sanity checks (rcqa.faithfulness.sanity); each method done on each model is a progress report, where a
    stopped job ends."""
    from rcqa.faithfulness.sanity import sanity_checks

    return sanity_checks(qa_model, example, methods, settings, progress=_told(report))


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


def heads(qa_model, example, report: Callable[[Any], None]):
    """Every attention head of the answer's window scored (rcqa.attention_heads.score_case, each part a progress
    report) and its attention patterns (head_patterns), from the same window."""
    from rcqa.attention_heads import head_case, head_patterns, score_case

    case = head_case(qa_model, example.passage, example.question)
    return score_case(qa_model, example, case, progress=_told(report)), head_patterns(qa_model, case)


def projection(qa_model, vectors, method, report: Callable[[Any], None]):
    """A 2-D map (rcqa.analysis.projection) of one layer's token vectors; the model is not used."""
    from rcqa.analysis.projection import project

    return project(vectors, method)


def image(qa_model, figure_json, format, report: Callable[[Any], None]) -> bytes:
    """A chart's figure (Plotly's JSON) as PNG or SVG (rcqa.figures.common.figure_image); the model is not used (the
    task names none). kaleido's Chromium is this process's child: it inherits its idle priority, and it ends with its
    pipe when a stopped task's worker is killed."""
    import plotly.io

    from rcqa.figures.common import figure_image

    return figure_image(plotly.io.from_json(figure_json), format)


def analysis(qa_model, name, result, settings, aggregation, k, cache, report: Callable[[Any], None]):
    """One registered analysis of an explanation (rcqa.analysis_run); an analysis of two methods explains the question with
    the other method first, through the disk result cache (a ResultCache)."""
    from rcqa.analysis_run import run_analysis

    return run_analysis(name, qa_model, result, settings, aggregation, k, cache=cache)
