"""Heavy jobs in worker processes: another process at idle priority, progress and errors relayed, a dead worker
replaced, and results equal to the same work done in the server's process."""
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.faithfulness.compare import Protocol, compare
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa import figures, qa
from rcqa.figures.stored import figure_json
from rcqa.ui import worker
from rcqa.ui.drawn import HeatmapView, heatmap_tab
from rcqa.ui.capacity import WORKERS_ENV, default_workers, job_gpus
from rcqa.ui.jobs import JobQueue, Stopped

# --- tasks: module-level, so that the worker can import them by name -------------------------------------------

def where_and_how(qa_model, report):
    report("started")
    return os.getpid(), os.sched_getscheduler(0), qa_model.fingerprint


def counts_to_three(qa_model, report):
    for step in (1, 2, 3):
        report(step)
    return "counted"


def refuses(qa_model, report):
    raise ValueError("the passage is empty")


class Unpicklable(Exception):
    def __init__(self, first, second):  # pickling calls it with one argument, the message: it cannot come back
        super().__init__(f"{first} and {second}")


def fails_unpicklably(qa_model, report):
    raise Unpicklable("one", "two")


def dies(qa_model, report):
    os._exit(3)


def gpu_binding(qa_model, report):
    return os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("RCQA_DEVICE")


def gpu_binding_a_while(qa_model, report):
    import time

    time.sleep(0.5)  # long enough that the other job starts while this one runs
    return gpu_binding(qa_model, report)


def reports_for_a_minute(qa_model, report):
    """A long job that reports progress every 0.1 s, as an explanation does after each layer or window."""
    for tick in range(600):
        time.sleep(0.1)
        report(tick)
    return "finished"


def silent_for_a_minute(qa_model, report):
    """A long job that never reports: only ending its process stops it."""
    time.sleep(60)
    return "finished"


def models_loaded_here(qa_model, report):
    from rcqa.model import loaded

    return sorted(name for name, _ in loaded._loaded)


@pytest.fixture(scope="module")
def processes():
    return worker.WorkerProcesses(1, threads=1)


def environment_variable(qa_model, name, report):
    return os.environ.get(name)


def task(qa_model, function, *args) -> worker.Task:
    return worker.Task(function, qa_model.name, qa_model.fingerprint, str(qa_model.device), args)


def test_a_task_runs_in_another_process_at_idle_priority_on_the_same_model(processes, tiny_bert):
    reports = []
    pid, policy, fingerprint = processes.run(task(tiny_bert, where_and_how), reports.append)
    assert pid != os.getpid() and policy == os.SCHED_IDLE
    assert fingerprint == tiny_bert.fingerprint and reports == ["started"]


def test_a_worker_sees_the_servers_environment_as_it_is_when_the_worker_starts(processes, monkeypatch):
    """Workers are forked from a fork server started with the first of them: a variable set since must still reach
    the next worker, as it reached a spawned one."""
    name = "RCQA_SET_AFTER_THE_FIRST_WORKER"
    asked = worker.Task(environment_variable, "", "", "cpu", (name,))
    assert processes.run(asked, lambda _: None) is None
    monkeypatch.setenv(name, "seen")
    assert worker.WorkerProcesses(1, threads=1).run(asked, lambda _: None) == "seen"


def test_where_there_is_no_fork_server_workers_are_spawned_and_run_the_same(monkeypatch, tiny_bert):
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])  # as on Windows
    assert worker.process.worker_context().get_start_method() == "spawn"
    reports = []
    pid, policy, fingerprint = worker.WorkerProcesses(1, threads=1).run(task(tiny_bert, where_and_how), reports.append)
    assert pid != os.getpid() and policy == os.SCHED_IDLE and fingerprint == tiny_bert.fingerprint
    assert reports == ["started"]


def test_progress_arrives_in_order_before_the_result(processes, tiny_bert):
    reports = []
    assert processes.run(task(tiny_bert, counts_to_three), reports.append) == "counted"
    assert reports == [1, 2, 3]


def test_an_error_in_the_worker_is_raised_in_the_server_with_its_type(processes, tiny_bert):
    with pytest.raises(ValueError, match="the passage is empty"):
        processes.run(task(tiny_bert, refuses), lambda _: None)
    with pytest.raises(RuntimeError, match="Unpicklable: one and two"):
        processes.run(task(tiny_bert, fails_unpicklably), lambda _: None)
    assert processes.run(task(tiny_bert, counts_to_three), lambda _: None) == "counted"  # and the worker goes on


@pytest.mark.slow  # worker processes started (and killed) for real: 30-50 s
def test_a_worker_that_dies_fails_its_job_and_a_new_one_takes_the_next(tiny_bert):
    processes = worker.WorkerProcesses(1, threads=1)
    first, *_ = processes.run(task(tiny_bert, where_and_how), lambda _: None)
    with pytest.raises(worker.WorkerDied):
        processes.run(task(tiny_bert, dies), lambda _: None)
    second, *_ = processes.run(task(tiny_bert, where_and_how), lambda _: None)
    assert second != first


def test_a_model_changed_since_the_server_loaded_it_is_refused(processes, tiny_bert):
    stale = worker.Task(counts_to_three, tiny_bert.name, "0" * 16, str(tiny_bert.device))
    with pytest.raises(RuntimeError, match="has changed on disk"):
        processes.run(stale, lambda _: None)


def test_an_explanation_from_a_worker_equals_the_one_computed_here(processes, tiny_bert, tmp_path):
    example, settings = gallery_example("lighthouse-when"), ExplainSettings(steps=8, tolerance=None)
    layers = []
    view = HeatmapView("l2", include_question=False, special_tokens=None)
    handed = worker.ExplanationRequest(example, settings, ResultCache.key(tiny_bert.fingerprint, example, settings),
                                       qa.read(tiny_bert, example.passage, example.question), view)  # as a page does
    result, hit, charts = processes.run(task(tiny_bert, worker.explanation, handed, ResultCache(tmp_path)),
                                        layers.append)
    here = explain(tiny_bert, example, settings)
    assert not hit and [layer.layer for layer in layers] == list(range(len(here.layers)))
    np.testing.assert_allclose(result.scores, here.scores, rtol=1e-5, atol=1e-6)
    # the heatmap the worker drew with the result is the one the page built from it before (its own result's)
    drawn_there = heatmap_tab(charts, result, "l2", False, False).heatmap
    assert drawn_there.figure.spec == figure_json(figures.heatmap(result, "l2").plotly) and charts.builds == {}
    nothing_handed = worker.ExplanationRequest(example, settings)  # as the CLI asks: keyed and answered there
    _, hit, none = processes.run(task(tiny_bert, worker.explanation, nothing_handed, ResultCache(tmp_path)),
                                 lambda _: None)
    assert hit and none is None  # the worker wrote the shared disk cache, under that key; no view asked, none drawn


def test_a_comparison_from_a_worker_equals_the_one_computed_here(processes, tiny_bert):
    example, protocol = gallery_example("lighthouse-when"), Protocol(k=3, draws=2)
    settings = ExplainSettings(steps=8, tolerance=None)
    theirs = processes.run(task(tiny_bert, worker.comparison, example, settings, protocol), lambda _: None)
    ours = compare(tiny_bert, example, protocol=protocol, settings=settings)
    for name, result in ours.methods.items():
        np.testing.assert_allclose(theirs.probabilities(theirs.methods[name], range(4)),
                                   ours.probabilities(result, range(4)), rtol=1e-5)


@pytest.mark.slow  # worker processes started (and killed) for real: 30-50 s
def test_a_worker_loads_the_preloaded_model_before_any_task_and_survives_one_that_cannot_load(tiny_model_dirs):
    bert, other = load_model(tiny_model_dirs["bert"]), load_model(tiny_model_dirs["distilbert"])
    processes = worker.WorkerProcesses(1, threads=1, preload=tiny_model_dirs["bert"])
    assert processes.run(task(other, models_loaded_here), lambda _: None) == sorted([bert.name, other.name])
    broken = worker.WorkerProcesses(1, threads=1, preload=str(Path(tiny_model_dirs["bert"]) / "missing"))
    assert broken.run(task(other, models_loaded_here), lambda _: None) == [other.name]


# --- one worker per GPU, with the GPUs faked: real children, each reporting the GPU it was bound to ------------

@pytest.fixture
def two_gpus(monkeypatch):
    """This process sees two CUDA devices, as far as rcqa's device choice can tell."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    for name in (WORKERS_ENV, "RCQA_DEVICE", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.slow  # worker processes started (and killed) for real: 30-50 s
def test_with_two_gpus_the_app_starts_one_worker_bound_to_each_and_spreads_jobs_over_them(two_gpus, tiny_bert):
    gpus = job_gpus()
    assert gpus == ["0", "1"] and default_workers(len(gpus)) == 2
    processes = worker.WorkerProcesses(default_workers(len(gpus)), threads=1, gpus=gpus)
    with ThreadPoolExecutor(2) as pool:  # two jobs at once: each on a worker, each worker on its own GPU
        bindings = list(pool.map(lambda _: processes.run(task(tiny_bert, gpu_binding_a_while), lambda _: None),
                                 range(2)))
    assert sorted(bindings) == [("0", None), ("1", None)]
    one_after_another = [processes.run(task(tiny_bert, gpu_binding), lambda _: None)[0] for _ in range(4)]
    assert sorted(one_after_another) == ["0", "0", "1", "1"]


@pytest.mark.slow  # worker processes started (and killed) for real: 30-50 s
def test_a_worker_that_dies_is_replaced_on_its_own_gpu(two_gpus, tiny_bert):
    processes = worker.WorkerProcesses(1, threads=1, gpus=["1"])
    with pytest.raises(worker.WorkerDied):
        processes.run(task(tiny_bert, dies), lambda _: None)
    assert processes.run(task(tiny_bert, gpu_binding), lambda _: None)[0] == "1"


@pytest.mark.slow  # worker processes started (and killed) for real: 30-50 s
def test_the_gpus_are_those_this_process_sees_or_the_one_named_and_the_worker_count_can_be_set(two_gpus, tiny_bert,
                                                                                              monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")  # a child must name the machine's GPUs, not ours
    assert job_gpus() == ["3", "5"]
    monkeypatch.setenv("RCQA_DEVICE", "cuda:1")
    assert job_gpus() == ["5"]
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert default_workers(1) == 3
    processes = worker.WorkerProcesses(3, threads=1, gpus=["3", "5"])
    bound = sorted(processes.run(task(tiny_bert, gpu_binding), lambda _: None) for _ in range(3))
    assert bound == [("3", "cuda"), ("3", "cuda"), ("5", "cuda")]  # round robin; cuda:1 is the child's one "cuda"
    on_the_servers_gpu = worker.Task(gpu_binding, tiny_bert.name, tiny_bert.fingerprint, "cuda:1")
    with pytest.raises(RuntimeError, match="device 'cuda' was asked for"):  # its own GPU, not a second one
        processes.run(on_the_servers_gpu, lambda _: None)
    monkeypatch.setenv("RCQA_DEVICE", "cpu")
    assert job_gpus() == []


def test_on_the_cpu_nothing_is_bound_and_the_workers_are_a_quarter_of_the_cores(monkeypatch, tiny_bert):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for name in (WORKERS_ENV, "RCQA_DEVICE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert job_gpus() == [] and default_workers(len(job_gpus())) == 2
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert default_workers(0) == 1
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    processes = worker.WorkerProcesses(1, threads=1, gpus=job_gpus())
    assert processes.run(task(tiny_bert, gpu_binding), lambda _: None)[0] == visible  # inherited, untouched
# as Streamlit does while a page runs, __main__ is the app's main script; a worker's start runs it again in the
# child (multiprocessing prepares a forked worker as a spawned one)
WORKER_FROM_A_PAGE = """
import sys, types
from rcqa.ui.worker.process import worker_context
main = types.ModuleType("__main__")
main.__file__ = sys.argv[1]
sys.modules["__main__"] = main
child = worker_context().Process(
    target=exec, args=("import sys; sys.exit(2 if 'streamlit' in sys.modules else 0)",))
child.start()
child.join()
sys.exit(child.exitcode)
"""


@pytest.mark.parametrize("main_script", ["app.py", "rcqa/ui/dashboard/app.py"])
def test_a_worker_started_from_a_page_runs_none_of_the_app_and_imports_no_streamlit(main_script):
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", WORKER_FROM_A_PAGE, str(root / main_script)], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


# --- running jobs stopped: a real worker process stops within a few seconds and the next job runs --------------

STOPS_WITHIN = worker.STOP_GRACE_SECONDS + 3  # seconds: the grace, and the time to see the stop and to kill


def queued_on(processes, qa_model, function, *args):
    """The queue's work for a task run in the worker processes, as the dashboard's rcqa.ui.queue.heavy builds it."""
    job = task(qa_model, function, *args)
    return lambda running: processes.run(job, running, running.stop)


def started(ticket) -> float:
    """Wait until the ticket's job has reported progress from its worker; the time it did."""
    deadline = time.monotonic() + 120
    while ticket.progress is None:
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.05)
    return time.monotonic()


@pytest.mark.parametrize("long_job, same_worker", [(reports_for_a_minute, True), (silent_for_a_minute, False)])
def test_a_long_job_cancelled_while_it_runs_stops_within_seconds_and_the_next_one_completes(tiny_bert, long_job,
                                                                                            same_worker):
    processes, queue = worker.WorkerProcesses(1, threads=1), JobQueue(workers=1)
    first_pid, *_ = processes.run(task(tiny_bert, where_and_how), lambda _: None)
    long = queue.submit("long", "s1", queued_on(processes, tiny_bert, long_job), estimate=1)
    if long_job is silent_for_a_minute:
        while long.state != "running":
            time.sleep(0.05)
        time.sleep(1)  # it has been sent to the worker, which sleeps without a word
        cancelled = time.monotonic()
    else:
        cancelled = started(long)
    after = queue.submit("after", "s2", queued_on(processes, tiny_bert, where_and_how), estimate=1)
    long.cancel()
    assert long.job.finished.wait(STOPS_WITHIN) and isinstance(long.job.error, Stopped)
    assert time.monotonic() - cancelled < STOPS_WITHIN
    assert after.wait(120) and after.state == "done"
    next_pid, policy, _ = after.result()
    assert (next_pid == first_pid) == same_worker  # asked to stop, it did; silent, it was killed and replaced
    assert policy == os.SCHED_IDLE


def test_a_job_past_its_time_limit_in_a_worker_is_stopped_and_says_so(tiny_bert):
    processes, queue = worker.WorkerProcesses(1, threads=1), JobQueue(workers=1, time_limit=2)
    processes.run(task(tiny_bert, counts_to_three), lambda _: None)  # the worker is up
    long = queue.submit("long", "s1", queued_on(processes, tiny_bert, reports_for_a_minute), estimate=1)
    began = started(long)
    assert long.wait(2 + STOPS_WITHIN) and long.state == "failed"
    assert time.monotonic() - began < 2 + STOPS_WITHIN
    with pytest.raises(Stopped, match="ran longer than 2 seconds"):
        long.result()
    after = queue.submit("after", "s2", queued_on(processes, tiny_bert, counts_to_three), estimate=1)
    assert after.wait(60) and after.result() == "counted"


def test_a_real_explanation_stops_at_its_next_layer_and_keeps_nothing_in_the_cache(processes, tiny_bert, tmp_path):
    stop, layers = threading.Event(), []

    def first_layer_then_stop(layer):
        layers.append(layer)
        stop.set()

    example, settings = gallery_example("canal-long"), ExplainSettings(windows="all", steps=8, tolerance=None)
    cache = ResultCache(tmp_path)
    with pytest.raises(Stopped):
        processes.run(task(tiny_bert, worker.explanation, worker.ExplanationRequest(example, settings), cache),
                      first_layer_then_stop, stop)
    assert not list(tmp_path.glob("*.npz"))
    everything = []
    result, hit, _ = processes.run(task(tiny_bert, worker.explanation, worker.ExplanationRequest(example, settings),
                                        cache), everything.append)
    assert not hit and len(result.layers) == tiny_bert.num_layers + 1  # the same worker goes on
    # the first run stopped early (a few reports were in the pipe already)
    assert len(layers) < len(everything) / 2
