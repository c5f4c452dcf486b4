"""Stopping one job never costs another visitor's (issue 56, finding 1). Before, a short job with no checkpoint,
cancelled inside the worker busy with another visitor's long job, had that worker killed 3 s later, and the long
job started again from nothing with its time limit reset. Real worker processes, and tasks that write down where
and how often they began, so that a restart cannot go unseen."""
import math
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from rcqa.attribution.memory import checkpoint
from rcqa.figures.common import image_export_available
from rcqa.types import Example
from rcqa.ui import worker
from rcqa.ui.jobs import JobQueue, Stopped

SHORT_BELOW = 60
LONG, SHORT = 1000.0, 5.0  # expected seconds: the long job runs in the main lane, the short one in the short lane
ANSWERED_WITHIN = 2.0  # seconds from a Cancel to the visitor's "stopped": a poll of the stop, on loaded cores
RUNS_ON = worker.STOP_GRACE_SECONDS + 1.5  # a silent short task outlives the grace that used to kill its worker


def long_in_chunks(qa_model, log, chunks, report):
    """A long job of `chunks` chunks of 0.05 s with a checkpoint between them, as chunked path points have; each
    time it begins it adds its process's id to `log`."""
    with open(log, "a") as written:
        written.write(f"{os.getpid()}\n")
    report("began")
    for _ in range(chunks):
        time.sleep(0.05)
        checkpoint()
    return os.getpid()


def silent(qa_model, seconds, log, report):
    """A short job with neither checkpoint nor progress report (as a PNG's drawing, the lens, a token map): nothing
    can stop it but its end or its process's. Writes its process's id when it begins and the time when it ends."""
    Path(log).write_text(f"{os.getpid()}\n")
    time.sleep(seconds)
    with open(log, "a") as written:
        written.write(f"{time.monotonic()}\n")
    return os.getpid()


def reports_for(qa_model, ticks, report):
    """A long job with progress reports every 0.1 s and no checkpoint: a short job sent to it waits for its end."""
    for tick in range(ticks):
        time.sleep(0.1)
        report(tick)
    return os.getpid()


def reported(qa_model, kind, args, log, seconds, report):
    """The real task `kind` (the answer lens, or a long paste's answer: rcqa.ui.worker), each progress report it
    makes written to `log` and `seconds` long (standing for a batch of windows, or a layer, of a larger model: the
    tiny one's take milliseconds) before it reaches the worker; "stopped" written if it was stopped."""
    def told(progress):
        with open(log, "a") as written:
            written.write(f"{progress[1]}\n")
        time.sleep(seconds)
        report(progress)

    try:
        return TOLD_KINDS[kind](qa_model, *args, told)
    except Stopped:
        with open(log, "a") as written:
            written.write("stopped\n")
        raise


TOLD_KINDS = {"lens": worker.lens, "paste answer": worker.reading}


def sleeps(qa_model, seconds, report):
    time.sleep(seconds)
    return os.getpid()


def temporary_files(qa_model, report):
    """What the worker's temporary folder holds, and the processes anywhere on the machine that name it (a Chromium
    with its profile there, even one its launcher left behind)."""
    import psutil
    import tempfile

    folder = tempfile.gettempdir()
    naming = [process.pid for process in psutil.process_iter(["cmdline"])
              if any(folder in part for part in process.info["cmdline"] or ())]
    return sorted(str(path) for path in Path(folder).rglob("*")), naming


@pytest.fixture(scope="module")
def processes():
    started = worker.WorkerProcesses(1, threads=1)
    yield started
    started.close()


def lanes(**settings) -> JobQueue:
    return JobQueue(workers=1, short_workers=1, short_below=SHORT_BELOW, **settings)


def submitted(queue, processes, qa_model, name, estimate, function, *args, alive=lambda: True):
    """Queued as the dashboard queues it (rcqa.ui.queue.heavy), in a session of its own."""
    task = worker.Task(function, qa_model.name, qa_model.fingerprint, str(qa_model.device), args)
    work = lambda running: processes.run(task, running, running.stop, short=running.short,  # noqa: E731
                                         timing=running)
    return queue.submit(name, name, work, alive, estimate=estimate)


def until(condition, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def began(log: Path) -> int:
    """The process id a task wrote when it began, once it has."""
    until(lambda: log.exists() and log.read_text().strip(), f"{log.name} never began")
    return int(log.read_text().split()[0])


def test_short_jobs_cancelled_or_closed_inside_another_visitors_long_job_never_restart_it(processes, tiny_bert,
                                                                                      tmp_path):
    queue, starts = lanes(time_limit=math.inf), tmp_path / "long.starts"
    long = submitted(queue, processes, tiny_bert, "long", LONG, long_in_chunks, str(starts), 100)  # 5 s alone
    until(lambda: long.progress is not None, "the long job never began")
    (host,) = map(int, starts.read_text().split())
    for ends in ("cancelled", "tab closed"):  # a Cancel, and a tab closed (its session gone: the queue's watcher)
        log, open_tab = tmp_path / f"{ends}.log", threading.Event()
        open_tab.set()
        short = submitted(queue, processes, tiny_bert, ends, SHORT, silent, RUNS_ON, str(log), alive=open_tab.is_set)
        assert began(log) == host  # computing inside the long job's worker, between two of its chunks
        asked = time.monotonic()
        short.cancel() if ends == "cancelled" else open_tab.clear()
        assert short.job.finished.wait(30) and isinstance(short.job.error, Stopped)
        assert short.job.ended - asked < ANSWERED_WITHIN  # the visitor is answered at once, not after a kill
    assert long.wait(120) and long.state == "done", long.job.error
    assert long.result() == host  # its worker was never killed under it
    assert starts.read_text().split() == [str(host)] and long.job.starts == 1  # it began once, and only once
    assert long.job.held >= 2 * (RUNS_ON - 1)  # the two stopped jobs ran on inside it, paused, to their ends


@pytest.mark.parametrize("kind", TOLD_KINDS)
def test_the_lens_and_a_long_pastes_answer_stopped_inside_another_visitors_job_stop_at_their_next_report(
        processes, tiny_bert, tmp_path, kind):
    """Before, neither had a stop point: stopped inside another visitor's long job, each ran on to its end (at
    their largest 10.6 s and 25.8 s of the default model) holding that job. Now each batch of windows, and each layer
    the lens decodes, is a progress report where the stop is honoured."""
    passage = "The ferry to Corran Point leaves the harbour at nine and returns by the evening tide. " * 100
    question = "When does the ferry leave?"
    args = (Example(id="a long paste", passage=passage, question=question),) if kind == "lens" else (passage, question)
    alone: list = []
    TOLD_KINDS[kind](tiny_bert, *args, alone.append)
    assert len(alone) >= 3  # batches of windows (and layers): points it may stop at, along the way
    queue, starts, log = lanes(time_limit=math.inf), tmp_path / "long.starts", tmp_path / f"{kind}.log"
    long = submitted(queue, processes, tiny_bert, "long", LONG, long_in_chunks, str(starts), 200)  # 10 s alone
    until(lambda: long.progress is not None, "the long job never began")
    stopped = submitted(queue, processes, tiny_bert, kind, SHORT, reported, kind, args, str(log), 1.0)
    until(lambda: log.exists() and log.read_text().strip(), f"the {kind} never reported")  # inside the long job
    asked = time.monotonic()
    stopped.cancel()
    assert stopped.job.finished.wait(30) and isinstance(stopped.job.error, Stopped)
    assert stopped.job.ended - asked < ANSWERED_WITHIN
    assert long.wait(120) and long.state == "done", long.job.error
    *reports, end = log.read_text().split("\n")[:-1]
    assert end == "stopped" and 1 <= len(reports) <= 2 < len(alone)  # at the report after the stop, not its end
    assert starts.read_text().split() == [str(long.result())] and long.job.starts == 1  # began once, never killed


def test_a_short_job_waiting_inside_another_task_for_its_checkpoint_has_no_clock_running(processes, tiny_bert):
    long_lanes, short_lanes = lanes(time_limit=math.inf), lanes(time_limit=1.5)
    long = submitted(long_lanes, processes, tiny_bert, "long", LONG, reports_for, 30)  # 3 s, and no checkpoint
    until(lambda: long.progress is not None, "the long job never began")
    short = submitted(short_lanes, processes, tiny_bert, "short", SHORT, sleeps, 0.2)
    assert long.wait(60) and long.state == "done"
    assert short.wait(60) and short.state == "done", short.job.error  # waited about 3 s in it: within its 1.5 s
    assert short.result() == long.result() and short.job.started >= long.job.ended - 0.2


@pytest.mark.slow  # two worker processes, and a task that runs on for seconds: about 30 s
def test_while_a_stopped_task_runs_on_in_its_worker_a_new_short_job_goes_to_another(tiny_bert, tmp_path):
    processes = worker.WorkerProcesses(2, threads=1)
    try:
        queue = JobQueue(workers=2, short_workers=1, short_below=SHORT_BELOW, time_limit=math.inf)
        longs = [submitted(queue, processes, tiny_bert, f"long {n}", LONG, long_in_chunks, str(tmp_path / f"{n}"),
                           400) for n in (1, 2)]  # 20 s each, one on each worker
        until(lambda: all(long.progress is not None for long in longs), "the long jobs never began")
        log = tmp_path / "stopped.log"
        stopped = submitted(queue, processes, tiny_bert, "stopped", SHORT, silent, 2 * RUNS_ON, str(log))
        host = began(log)
        stopped.cancel()
        assert stopped.job.finished.wait(30) and isinstance(stopped.job.error, Stopped)
        after = submitted(queue, processes, tiny_bert, "after", SHORT, sleeps, 0.1)
        assert after.wait(60) and after.state == "done", after.job.error
        assert after.result() != host  # not sent to wait behind work nobody wants
        until(lambda: len(log.read_text().split()) == 2, "the stopped task never ended")
        assert after.job.ended < float(log.read_text().split()[1])  # done while the stopped one still ran on
        for long in longs:
            long.cancel()
    finally:
        processes.close()


@pytest.mark.slow  # a worker killed for real and replaced: about 30 s
def test_a_worker_killed_from_outside_tells_the_jobs_begun_in_it_and_one_waiting_there_runs_again(tiny_bert,
                                                                                                  tmp_path):
    processes = worker.WorkerProcesses(1, threads=1)
    try:
        queue = JobQueue(workers=1, short_workers=2, short_below=SHORT_BELOW, time_limit=math.inf)
        long = submitted(queue, processes, tiny_bert, "long", LONG, long_in_chunks, str(tmp_path / "long"), 400)
        until(lambda: long.progress is not None, "the long job never began")
        log = tmp_path / "inside.log"
        inside = submitted(queue, processes, tiny_bert, "inside", SHORT, silent, 60, str(log))
        host = began(log)
        waits = tmp_path / "waiting.log"
        waiting = submitted(queue, processes, tiny_bert, "waiting", SHORT, silent, 0.1, str(waits))
        time.sleep(0.5)  # sent to the same worker, where it waits for the long job's next checkpoint
        assert waiting.state == "running" and not waits.exists()
        os.kill(host, signal.SIGKILL)  # out of memory, or an operator's kill
        for ticket in (long, inside):  # begun there: each visitor is told
            assert ticket.wait(30) and ticket.state == "failed"
            assert type(ticket.job.error) is worker.WorkerDied
        assert waiting.wait(120) and waiting.state == "done", waiting.job.error  # it had not begun: it goes again
        assert waiting.result() != host and began(waits) == waiting.result()
    finally:
        processes.close()


def a_slow_figure() -> str:
    """50,000 markers: kaleido draws them for tens of seconds, far past a stop."""
    import plotly.graph_objects as go

    points = [i / 50_000 for i in range(50_000)]
    return go.Figure(go.Scatter(x=points, y=points[::-1], mode="markers")).to_json()


@pytest.mark.skipif(not image_export_available(), reason="kaleido finds no local Chromium")
def test_a_drawing_cancelled_inside_another_visitors_job_ends_at_once_and_leaves_nothing(processes, tiny_bert,
                                                                                        tmp_path):
    queue, starts = lanes(time_limit=math.inf), tmp_path / "long.starts"
    long = submitted(queue, processes, tiny_bert, "long", LONG, long_in_chunks, str(starts), 200)  # 10 s alone
    until(lambda: long.progress is not None, "the long job never began")
    task = worker.Task(worker.image, "", "", "cpu", (a_slow_figure(), "png"))
    drawing = queue.submit("png", "png", lambda running: processes.run(task, running, running.stop, short=True,
                                                                       timing=running), estimate=SHORT)
    until(lambda: long.job.held > 2, "the drawing never ran inside the long job")
    held = long.job.held  # 2 s into a drawing of tens of seconds
    drawing.cancel()
    assert drawing.job.finished.wait(30) and isinstance(drawing.job.error, Stopped)
    assert long.wait(120) and long.state == "done"
    assert long.job.held - held < ANSWERED_WITHIN  # it went on at once, not at the drawing's end
    assert starts.read_text().split() == [str(long.result())]  # began once, in the worker it ended in
    files, chromium = processes.run(worker.Task(temporary_files, "", "", "cpu"), lambda _: None)
    assert chromium == []  # the drawing's Chromium is gone, all of it
    until(lambda: not processes.run(worker.Task(temporary_files, "", "", "cpu"), lambda _: None)[0],
          f"the stopped drawing's files stayed in the worker's temporary folder: {files}", 30)
