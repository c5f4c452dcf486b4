"""A chart's PNG / SVG is drawn in a worker process (issue 42): not in the server's, at its price, and a Cancel ends
the drawing (its worker, and the Chromium kaleido started in it) within seconds, the next job going on."""
import time

import plotly.graph_objects as go
import psutil
import pytest

import rcqa.figures.common
from rcqa.figures.common import image_export_available
from rcqa.ui import queue as ui_queue
from rcqa.ui import worker
from rcqa.ui.jobs import JobQueue, Stopped

pytestmark = pytest.mark.skipif(not image_export_available(), reason="kaleido finds no local Chromium")
STOPS_WITHIN = worker.STOP_GRACE_SECONDS + 3  # seconds: the grace, and the time to see the stop and to kill


def a_figure(title: str) -> go.Figure:
    return go.Figure(go.Bar(x=["a", "b", "c"], y=[3, 1, 2]), layout={"title": title})


def a_slow_figure(title: str) -> go.Figure:
    """50,000 markers: kaleido draws them for tens of seconds (21 s for 20,000 here), so a Cancel sent once its
    Chromium is up lands while the drawing is under way; a three-bar chart was drawn before the Cancel arrived."""
    points = [i / 50_000 for i in range(50_000)]
    return go.Figure(go.Scatter(x=points, y=points[::-1], mode="markers"), layout={"title": title})


@pytest.fixture
def processes(monkeypatch):
    """One real worker process behind rcqa.ui.queue.heavy, and no image drawn in this process (one would fail)."""
    def not_here(figure, format):
        raise AssertionError("an image was drawn in the server's process")

    monkeypatch.setattr(rcqa.figures.common, "figure_image", not_here)
    started = worker.WorkerProcesses(1, threads=1)
    monkeypatch.setattr(ui_queue, "worker_processes", lambda: started)
    return started


def chromiums(processes: worker.WorkerProcesses) -> set[psutil.Process]:
    """The Chromium processes the workers started (kaleido's): not another Chromium of this test run, such as the
    browser tier's, which lives for the whole session."""
    return {process for pid in processes.pids() for process in psutil.Process(pid).children(recursive=True)
            if "chrom" in process.name().lower()}


def image_work(title: str, kind: str, figure=a_figure):
    return ui_queue.heavy(None, worker.image, figure(title).to_json(), kind)


def test_an_image_is_drawn_in_a_worker_process(processes):
    queue = JobQueue(workers=1)
    ticket = queue.submit("image-svg", "s1", image_work("Drawn elsewhere", "svg"), estimate=5)
    assert ticket.wait(120) and ticket.state == "done", ticket.job.error
    svg = ticket.result().decode()
    assert svg.startswith("<svg") and "Drawn elsewhere" in svg


def test_a_cancelled_image_stops_within_seconds_leaves_no_chromium_and_the_next_job_runs(processes):
    queue = JobQueue(workers=1)
    drawing = queue.submit("image-png", "s1", image_work("Cancelled", "png", a_slow_figure), estimate=5)
    deadline = time.monotonic() + 120  # a worker starting on loaded cores loads its model first
    while not (drawers := chromiums(processes)):  # kaleido has started its Chromium: the drawing is under way
        assert time.monotonic() < deadline and not drawing.job.finished.is_set(), "no Chromium was started"
        time.sleep(0.05)
    cancelled = time.monotonic()
    drawing.cancel()
    assert drawing.job.finished.wait(STOPS_WITHIN) and isinstance(drawing.job.error, Stopped)
    assert time.monotonic() - cancelled < STOPS_WITHIN
    after = queue.submit("image-svg", "s2", image_work("After", "svg"), estimate=5)
    assert after.wait(120) and after.state == "done", after.job.error
    assert "After" in after.result().decode()
    _, alive = psutil.wait_procs(drawers, timeout=10)  # the killed worker's Chromium ends with its pipe
    assert not alive


def test_one_drawing_at_a_time_in_a_process_and_a_stop_while_waiting_ends_at_once(monkeypatch):
    """Two visitors' images asked at once in one worker (the main lane's and the short lane's tasks) are drawn one
    after the other: one Chromium in the process at a time (its 0.8-0.9 GB counted once in the memory bound), and a
    stopped drawing kills no other's. A stop while waiting ends the task before it draws. No Chromium here: the
    drawing is a stand-in that counts how many draw at once."""
    import threading

    from rcqa.ui.worker import tasks

    drawing, most, lock = [0], [0], threading.Lock()

    def counted(figure, format):
        with lock:
            drawing[0] += 1
            most[0] = max(most[0], drawing[0])
        time.sleep(0.6)
        with lock:
            drawing[0] -= 1
        return format.encode()

    monkeypatch.setattr(rcqa.figures.common, "figure_image", counted)
    figure = a_figure("one at a time").to_json()
    images = []
    threads = [threading.Thread(target=lambda: images.append(tasks.image(None, figure, "png", lambda _: None)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert images == [b"png", b"png"] and most[0] == 1  # before: 2, both Chromiums up together

    class Stop(Exception):
        pass

    def stopped(_):
        raise Stop

    holder = threading.Thread(target=lambda: tasks.image(None, figure, "svg", lambda _: None))
    holder.start()
    time.sleep(0.1)  # the holder draws
    began = time.monotonic()
    with pytest.raises(Stop):
        tasks.image(None, figure, "png", stopped)
    assert time.monotonic() - began < 0.5 and most[0] == 1  # stopped at its first wait, nothing drawn beside
    holder.join()
