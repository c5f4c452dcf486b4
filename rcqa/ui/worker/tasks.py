"""What the app sends its worker processes: each a module-level function(qa_model, *args, report), so that it
pickles by name, importing what it runs only when it runs, so that a worker starts light."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rcqa.ui.child import in_worker

if TYPE_CHECKING:
    from rcqa.qa import Reading
    from rcqa.types import Example
    from rcqa.types.settings import ExplainSettings
    from rcqa.ui.drawn import HeatmapView


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
    """The model's answer with its logits (rcqa.qa.read) to a passage too long to answer in the page thread; each
    batch of windows read is a progress report, where a stopped job ends."""
    from rcqa.qa import read

    return read(qa_model, passage, question, progress=_told(report))


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
    """The answer lens (rcqa.lens) of the example; each batch of windows and each layer decoded is a progress
    report, where a stopped job ends."""
    from rcqa.lens import answer_lens

    return answer_lens(qa_model, example, progress=_told(report))


def sentence_evidence(qa_model, example, answer_chars, ablations, report: Callable[[Any], None]):
    """The answer read again with each sentence deleted and with random halves of them deleted
    (rcqa.faithfulness.sentences.sentence_evidence); each reading is a progress report, where a stopped job ends."""
    from rcqa.faithfulness.sentences import sentence_evidence as evidence

    return evidence(qa_model, example, answer_chars, ablations, progress=_told(report))


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
    task names none). kaleido's Chromium is this process's child, so it inherits its idle priority.

    kaleido draws without a checkpoint, so the drawing runs in a thread while this one reports every DRAWING_POLL
    seconds, a point where a stopped job ends (rcqa.ui.child). In a worker, a stop kills the Chromium the drawing
    started, and removes what it left in the temporary folder once kaleido's thread has noticed (about 2 s later,
    waiting, not computing); the task ends at once. So a stopped drawing neither holds another visitor's job it runs
    inside for the 3-5 s of its drawing, nor has its worker killed when it runs alone (before, both: issue 56)."""
    import plotly.io

    from rcqa.figures.common import figure_image

    figure = plotly.io.from_json(figure_json)
    while not _ONE_DRAWING.acquire(timeout=DRAWING_POLL):  # another visitor's drawing runs: wait, stoppably
        report(None)
    try:  # from here the drawing's thread releases it as it ends
        folder = tempfile.gettempdir()
        children, entries = _children(), set(os.listdir(folder))
        drawing = _Drawing(lambda: figure_image(figure, format), _ONE_DRAWING.release)
    except BaseException:
        _ONE_DRAWING.release()
        raise
    try:
        while not drawing.done.wait(DRAWING_POLL):
            report(None)
    except BaseException:
        if in_worker():  # here nothing else starts processes, nor writes in the temporary folder, meanwhile
            _kill_new(children, drawing)
            drawing.leaves([os.path.join(folder, name) for name in set(os.listdir(folder)) - entries])
        raise
    return drawing.result()


DRAWING_POLL = 0.2  # seconds between a drawing's stop points
# one drawing at a time in a process, from its start to its thread's end: so its Chromium (0.8-0.9 GB resident) is
# counted once in the memory bound (docs/serving.md), and a stopped drawing kills only its own Chromium (the processes
# started since it began would include a second drawing's)
_ONE_DRAWING = threading.Lock()
LAUNCH_SECONDS = 2.0  # a drawing stopped before its Chromium started waits this long for it to start, to kill it


def _kill_new(children: set[int], drawing: _Drawing) -> None:
    """Kill the child processes started since `children` (the drawing's Chromium, with the processes it started);
    one not started yet is waited for, a while, unless the drawing ends first."""
    deadline = time.monotonic() + LAUNCH_SECONDS
    while not (new := _children() - children) and not drawing.done.is_set() and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in new:
        try:  # choreographer starts Chromium from a launcher in a process group of its own: the group, all of it
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:  # ended meanwhile
            pass


class _Drawing:
    """draw() in a daemon thread of its own; its result (or error) once done is set, and then ended() is called. A
    stopped drawing is told what to remove when its thread ends (leaves)."""

    def __init__(self, draw: Callable[[], bytes], ended: Callable[[], None]):
        self.done, self._draw, self._ended = threading.Event(), draw, ended
        self._image: bytes | None = None
        self._error: BaseException | None = None
        self._left: list[str] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._run, name="rcqa-drawing", daemon=True).start()

    def _run(self) -> None:
        try:
            self._image = self._draw()
        except BaseException as error:  # handed to the task, or dropped with a stopped one
            self._error = error
        finally:
            with self._lock:
                self.done.set()
                left = self._left
            _remove_all(left)
            self._ended()

    def leaves(self, paths: list[str]) -> None:
        """Remove `paths` once the drawing's thread has ended (now, if it has)."""
        with self._lock:
            self._left = paths
            ended = self.done.is_set()
        if ended:
            _remove_all(paths)

    def result(self) -> bytes:
        if self._error is not None:
            raise self._error
        assert self._image is not None
        return self._image


def _remove_all(paths: list[str]) -> None:
    for path in paths:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.remove(path)


def _children() -> set[int]:
    """This process's child processes, from /proc (Linux); none found elsewhere, where a stopped drawing then runs
    on to its end in its thread."""
    found: set[int] = set()
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open(f"/proc/self/task/{thread}/children") as children:
                found.update(int(pid) for pid in children.read().split())
        except OSError:  # the thread ended, or no such file
            continue
    return found


def analysis(qa_model, name, result, settings, aggregation, k, cache, report: Callable[[Any], None]):
    """One registered analysis of an explanation (rcqa.analysis_run); an analysis of two methods explains the question with
    the other method first, through the disk result cache (a ResultCache)."""
    from rcqa.analysis_run import run_analysis

    return run_analysis(name, qa_model, result, settings, aggregation, k, cache=cache)
