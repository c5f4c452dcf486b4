"""The short lane: a job expected to be short never waits behind a long one. The queue's lanes with fake jobs
(events, not sleeps), then real worker processes, where the one worker runs a short job inside the long one
between its chunks."""
import math
import os
import threading
import time

import numpy as np
import pytest

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.attribution.memory import checkpoint
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.ui import worker
from rcqa.ui.capacity import SHORT_JOB_ENV, SHORT_JOB_SECONDS, SHORT_WORKERS_ENV, short_job_seconds, short_workers
from rcqa.ui.jobs import JobQueue, Stopped

WAIT = 10  # seconds: only reached if the queue is broken
SHORT_BELOW = 60
LONG, SHORT = 1000.0, 5.0  # expected seconds
STOPS_WITHIN = worker.STOP_GRACE_SECONDS + 3


class Gate:
    """A fake job that runs until released, saying when it started and, once stopped, raising as work does (unless
    it is deaf to stops)."""

    def __init__(self, deaf: bool = False):
        self.started, self.release, self.runs, self.deaf = threading.Event(), threading.Event(), 0, deaf

    def __call__(self, running):
        self.runs += 1
        self.started.set()
        while not self.release.wait(0.01):
            if not self.deaf:
                running.check()
        return "done"


def lanes(**settings) -> JobQueue:
    return JobQueue(workers=1, short_workers=1, short_below=SHORT_BELOW, **settings)


def test_a_short_job_runs_beside_a_long_one_and_a_long_one_never_in_the_short_lane():
    queue = lanes()
    first_long, second_long, short = Gate(), Gate(), Gate()
    running = queue.submit("long", "s1", first_long, estimate=LONG)
    assert first_long.started.wait(WAIT) and running.job.lane == "main"
    waiting = queue.submit("second long", "s2", second_long, estimate=LONG)
    time.sleep(0.2)  # the short lane is idle, and still leaves it waiting
    assert waiting.state == "waiting" and second_long.runs == 0
    beside = queue.submit("short", "s3", short, estimate=SHORT)
    assert short.started.wait(WAIT) and beside.job.lane == "short" and beside.state == "running"
    short.release.set()
    assert beside.wait(WAIT) and beside.result() == "done" and running.state == "running"
    first_long.release.set()
    assert second_long.started.wait(WAIT) and waiting.job.lane == "main"
    second_long.release.set()
    assert waiting.wait(WAIT)


def test_without_a_short_lane_a_short_job_waits_for_the_long_one():
    queue = JobQueue(workers=1)
    long, short = Gate(), Gate()
    running = queue.submit("long", "s1", long, estimate=LONG)
    assert long.started.wait(WAIT)
    behind = queue.submit("short", "s2", short, estimate=SHORT)
    time.sleep(0.2)
    assert behind.state == "waiting" and behind.ahead() == 1
    long.release.set()
    short.release.set()
    assert running.wait(WAIT) and behind.wait(WAIT)


def test_the_main_lane_takes_a_short_job_when_it_is_free():
    queue = lanes()
    short, also_short = Gate(), Gate()
    tickets = [queue.submit("a", "s1", short, estimate=SHORT), queue.submit("b", "s2", also_short, estimate=SHORT)]
    assert short.started.wait(WAIT) and also_short.started.wait(WAIT)
    assert sorted(ticket.job.lane for ticket in tickets) == ["main", "short"]
    short.release.set()
    also_short.release.set()
    assert all(ticket.wait(WAIT) for ticket in tickets)


def test_a_short_job_is_cancelled_and_time_limited_in_its_lane():
    queue = lanes(time_limit=0.5)
    long, cancelled, too_long = Gate(deaf=True), Gate(), Gate()  # the long one holds the main lane throughout
    running = queue.submit("long", "s1", long, estimate=LONG)
    assert long.started.wait(WAIT)
    ticket = queue.submit("cancelled", "s2", cancelled, estimate=SHORT)
    assert cancelled.started.wait(WAIT)
    ticket.cancel()
    assert ticket.job.finished.wait(WAIT) and isinstance(ticket.job.error, Stopped)
    limited = queue.submit("too long", "s3", too_long, estimate=SHORT)
    assert limited.wait(WAIT) and limited.job.lane == "short"
    with pytest.raises(Stopped, match="ran longer than 0.5 seconds"):
        limited.result()
    assert running.state == "running"
    long.release.set()


def test_the_time_a_job_was_held_does_not_count_against_its_time_limit():
    queue = JobQueue(workers=2, time_limit=1)

    def held_for(seconds):
        def work(running):
            running.held(seconds)  # as a worker reports a short job run inside this one
            for _ in range(30):
                time.sleep(0.05)
                running.check()
            return "finished"
        return work

    held = queue.submit("held", "s1", held_for(60), estimate=1)
    not_held = queue.submit("not held", "s2", held_for(0), estimate=1)
    assert held.wait(WAIT) and held.result() == "finished"  # 1.5 s of work, 60 s of it held: within 1 s
    assert not_held.wait(WAIT) and not_held.state == "failed"


class InThisThread:
    """A worker process's stand-in that runs its task in the calling thread, reading the stop at the task's progress
    report as a worker does: the pool's lending without processes."""

    gpu, tasks, pid = None, 0, None

    def __init__(self, *args, **kwargs):
        pass

    def alive(self) -> bool:
        return True

    def takes_borrowers(self) -> bool:
        return True

    def run(self, task, report, stop=None, timing=None):
        timing.began()

        def reported(progress):
            if stop.is_set():
                raise Stopped("the job was stopped")
            report(progress)
        return task.run(None, reported)


def computes(qa_model, seconds, report):
    time.sleep(seconds)
    report("computed")  # where a stopped task ends
    return seconds


def computes_without_a_report(qa_model, seconds, report):
    time.sleep(seconds)  # nowhere to read a stop: runs to its end
    return seconds


def test_a_main_lane_job_waiting_for_the_worker_a_short_job_took_has_no_clock_running(monkeypatch):
    monkeypatch.setattr(worker.pool, "WorkerProcess", InThisThread)
    processes, queue = worker.WorkerProcesses(1, threads=1), lanes(time_limit=0.5)

    def submit(name, estimate, function, seconds):
        task = worker.Task(function, "model", "fingerprint", "cpu", (seconds,))
        return queue.submit(name, name, lambda running: processes.run(task, running, running.stop, running.short,
                                                                      running), estimate=estimate)

    elsewhere = Gate()  # the main lane busy with work of its own, so that the short lane takes the short job
    queue.submit("elsewhere", "elsewhere", elsewhere, estimate=LONG)
    assert elsewhere.started.wait(WAIT)
    short = submit("short", SHORT, computes_without_a_report, 1.2)  # takes the one worker, idle then
    time.sleep(0.1)
    assert short.job.lane == "short"
    elsewhere.release.set()
    long = submit("long", LONG, computes, 0.2)  # the main lane takes it, and it waits 1.1 s for the worker: past 0.5 s
    assert short.wait(WAIT) and short.result() == 1.2
    assert long.wait(WAIT) and long.result() == 0.2  # 0.2 s of running: within its 0.5 s
    assert long.job.started >= short.job.ended - 0.05  # its clock started when the worker began it


@pytest.mark.parametrize("seconds, workers", [(None, None), ("90", "2"), ("0", "0")])
def test_the_operator_sets_the_short_lane(monkeypatch, seconds, workers):
    for name, value in ((SHORT_JOB_ENV, seconds), (SHORT_WORKERS_ENV, workers)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    expected = {None: (SHORT_JOB_SECONDS, 1), "90": (90.0, 2), "0": (0.0, 0)}[seconds]
    assert (short_job_seconds(), short_workers()) == expected


# --- real worker processes: one worker, a long job in it, a short one asked for while it runs --------------------

def in_chunks_for(qa_model, chunks, report):
    """A long task of `chunks` chunks of 0.05 s, with a checkpoint between them as chunked path points have."""
    report("started")
    for _ in range(chunks):
        time.sleep(0.05)
        checkpoint()
    return os.getpid()


def sleeps(qa_model, seconds, report):
    """A short task that computes for `seconds` without a checkpoint."""
    report("started")
    time.sleep(seconds)
    return os.getpid()


def reports_until_stopped(qa_model, report):
    for tick in range(600):
        time.sleep(0.1)
        report(tick)
    return "finished"


@pytest.fixture(scope="module")
def processes():
    return worker.WorkerProcesses(1, threads=1)


def submitted(queue, processes, qa_model, name, estimate, function, *args):
    """Queue the task as the dashboard does (rcqa.ui.queue.heavy), each job in a session of its own."""
    task = worker.Task(function, qa_model.name, qa_model.fingerprint, str(qa_model.device), args)
    work = lambda running: processes.run(task, running, running.stop, short=running.short,  # noqa: E731
                                         timing=running)
    return queue.submit(name, name, work, estimate=estimate)


def began(ticket) -> None:
    """Wait until the ticket's job has begun in its worker."""
    deadline = time.monotonic() + 120
    while ticket.progress is None:
        assert time.monotonic() < deadline, "the job never began"
        time.sleep(0.05)


def test_a_short_job_asked_for_while_a_long_one_runs_waits_less_than_it_runs_and_ends_first(processes, tiny_bert):
    queue, pid = lanes(time_limit=math.inf), worker_pid(processes, tiny_bert)
    long = submitted(queue, processes, tiny_bert, "long", LONG, in_chunks_for, 400)  # 20 s of chunks
    began(long)
    short = submitted(queue, processes, tiny_bert, "short", SHORT, sleeps, 1.0)
    assert short.wait(60) and short.state == "done"
    assert long.state == "running"  # the short one ended first
    job = short.job
    assert job.started - job.arrived <= job.ended - job.started  # its wait, at most its own run time
    assert short.result() == pid  # inside the one worker, busy with the long job
    assert long.job.held >= 0.8  # its 1 s of sleep held the long job, and counts for nothing against its limit
    long.cancel()  # the long one stops at its next chunk, without killing the worker
    assert long.job.finished.wait(STOPS_WITHIN) and isinstance(long.job.error, Stopped)
    assert worker_pid(processes, tiny_bert) == pid


def worker_pid(processes, qa_model) -> int:
    """The process id of the one worker, asked while it is idle."""
    return processes.run(worker.Task(sleeps, qa_model.name, qa_model.fingerprint, "cpu", (0,)), lambda _: None)


def test_real_explanations_the_short_inside_the_long_each_equal_to_the_same_explanation_alone(processes, tiny_bert,
                                                                                            tmp_path):
    # the long job's chunks one path point each, as a larger model's are in the memory budget: its checkpoints are
    # a fraction of the short job apart, as they are for the default model's whole passage and one window
    long_example = gallery_example("canal-long")
    long_settings = ExplainSettings(windows="all", steps=16, tolerance=None, memory_budget_mb=1)
    short_example, short_settings = gallery_example("lighthouse-when"), ExplainSettings(steps=32, tolerance=None)
    queue, cache = lanes(time_limit=math.inf), ResultCache(tmp_path)
    long = submitted(queue, processes, tiny_bert, "long", LONG, worker.explanation,
                     worker.ExplanationRequest(long_example, long_settings), cache)
    began(long)
    short = submitted(queue, processes, tiny_bert, "short", SHORT, worker.explanation,
                      worker.ExplanationRequest(short_example, short_settings), cache)
    assert short.wait(120) and short.state == "done"
    assert not long.job.finished.is_set()  # the short one ended first
    job = short.job
    assert job.started - job.arrived <= job.ended - job.started
    assert long.wait(300) and long.state == "done"
    for ticket, example, settings in ((long, long_example, long_settings), (short, short_example, short_settings)):
        result, _, _ = ticket.result()
        alone = explain(tiny_bert, example, settings)
        np.testing.assert_allclose(result.scores, alone.scores, rtol=1e-5, atol=1e-6)


def test_a_short_job_cancelled_inside_a_long_one_stops_and_the_long_one_goes_on(processes, tiny_bert):
    queue, pid = lanes(time_limit=math.inf), worker_pid(processes, tiny_bert)
    long = submitted(queue, processes, tiny_bert, "long", LONG, in_chunks_for, 100)  # 5 s of chunks
    began(long)
    short = submitted(queue, processes, tiny_bert, "short", SHORT, reports_until_stopped)
    began(short)
    cancelled = time.monotonic()
    short.cancel()
    assert short.job.finished.wait(STOPS_WITHIN) and isinstance(short.job.error, Stopped)
    assert time.monotonic() - cancelled < STOPS_WITHIN
    assert long.wait(60) and long.state == "done" and long.result() == pid  # not killed


def test_a_long_job_cancelled_while_a_short_one_runs_inside_it_lets_the_short_one_finish(processes, tiny_bert):
    queue, pid = lanes(time_limit=math.inf), worker_pid(processes, tiny_bert)
    long = submitted(queue, processes, tiny_bert, "long", LONG, in_chunks_for, 400)
    began(long)
    short = submitted(queue, processes, tiny_bert, "short", SHORT, sleeps, 2 * worker.STOP_GRACE_SECONDS)
    began(short)
    long.cancel()  # its grace begins once the short one is done: the worker is not killed under it
    assert short.wait(60) and short.state == "done" and short.result() == pid
    assert long.job.finished.wait(STOPS_WITHIN) and isinstance(long.job.error, Stopped)
    assert worker_pid(processes, tiny_bert) == pid  # it stopped itself: the worker was not killed


def test_a_short_job_past_the_time_limit_inside_a_long_one_is_stopped_and_the_long_ones_limit_leaves_out_the_pause(
        processes, tiny_bert):
    queue = lanes(time_limit=3)
    long = submitted(queue, processes, tiny_bert, "long", LONG, in_chunks_for, 40)  # 2 s of its own
    began(long)
    short = submitted(queue, processes, tiny_bert, "short", SHORT, reports_until_stopped)
    assert short.wait(3 + STOPS_WITHIN) and short.state == "failed"
    with pytest.raises(Stopped, match="ran longer than 3 seconds"):
        short.result()
    assert long.wait(60) and long.state == "done"  # 2 s of work and over 3 s held: within its 3 s


def reports_for(qa_model, ticks, report):
    """A long task that reports progress every 0.1 s for `ticks` ticks and has no checkpoint: a short task sent to
    it is read at a report (as a whole passage's, which reports each window between its chunks) but runs only at a
    checkpoint, so it is still waiting in the worker when this one ends, stopped at a report or done."""
    for tick in range(ticks):
        time.sleep(0.1)
        report(tick)
    return os.getpid()


@pytest.mark.parametrize("ends", ["cancelled", "finished"])
def test_a_short_job_waiting_in_a_long_one_that_ends_before_its_next_checkpoint_runs_next_in_the_same_worker(
        processes, tiny_bert, ends):
    queue, pid = lanes(time_limit=math.inf), worker_pid(processes, tiny_bert)
    long = submitted(queue, processes, tiny_bert, "long", LONG, reports_for, 600 if ends == "cancelled" else 20)
    began(long)
    short = submitted(queue, processes, tiny_bert, "short", SHORT, sleeps, 0.1)
    time.sleep(0.5)  # sent to the busy worker, and read there at one of the long task's reports
    assert short.state == "running" and short.progress is None  # waiting in the worker for a checkpoint
    if ends == "cancelled":
        long.cancel()  # it stops itself at its next report: the worker is not killed
        assert long.job.finished.wait(STOPS_WITHIN) and isinstance(long.job.error, Stopped)
    else:
        assert long.wait(WAIT) and long.result() == pid
    assert short.wait(WAIT) and short.state == "done", short.job.error  # before: it waited there until its limit
    assert short.result() == pid


@pytest.mark.slow  # a worker killed and replaced for real: about 20 s
def test_a_short_job_waiting_in_a_long_one_killed_for_its_stop_runs_again_on_the_next_worker(processes, tiny_bert):
    """The long task's chunk never reaches a checkpoint (a step longer than the grace), so its cancel kills the
    worker, with the short job sent to it still waiting there: that job goes again, on the worker that replaces it."""
    queue, pid = lanes(time_limit=math.inf), worker_pid(processes, tiny_bert)
    long = submitted(queue, processes, tiny_bert, "long", LONG, sleeps, 60.0)
    began(long)
    short = submitted(queue, processes, tiny_bert, "short", SHORT, sleeps, 0.1)
    time.sleep(0.3)  # sent to the busy worker, where it waits for the long task's next checkpoint
    assert short.state == "running" and short.progress is None
    long.cancel()
    assert long.job.finished.wait(STOPS_WITHIN) and isinstance(long.job.error, Stopped)
    assert short.wait(120) and short.state == "done", short.job.error
    assert short.result() != pid  # the new worker ran it
