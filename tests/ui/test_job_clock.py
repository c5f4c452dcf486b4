"""A job's time limit counts its own running only (issue 56): it never resets when the job's work begins again,
and never counts the job's waits. Before, each start of a job's work set its clock to zero, so a job restarted four
times ran 63 s past its 60 s limit. Fake work that says when it runs and waits, as a worker's follower does."""
import time

from rcqa.ui.jobs import WATCH_SECONDS, JobQueue, Stopped

WAIT = 10  # seconds: only reached if the queue is broken


def runs_waits_and_runs(first: float, wait: float, second: float):
    """Work that runs `first` seconds, waits `wait` (its worker ended before it began there: it goes again), then
    runs `second` seconds, looking at its stop between steps."""
    def work(running):
        running.began()
        time.sleep(first)
        running.waiting()
        time.sleep(wait)
        running.began()
        end = time.monotonic() + second
        while time.monotonic() < end:
            time.sleep(0.02)
            running.check()
        return "finished"
    return work


def test_a_job_whose_work_begins_again_keeps_the_seconds_it_ran_against_its_limit():
    queue = JobQueue(workers=1, time_limit=1.6)
    ticket = queue.submit("again", "s1", runs_waits_and_runs(1.0, 0.5, 1.5), estimate=1)
    assert ticket.wait(WAIT) and ticket.state == "failed"  # 1.0 + 1.5 s of running: past 1.6 s
    assert isinstance(ticket.job.error, Stopped) and "ran longer than 1.6 seconds" in str(ticket.job.error)
    job = ticket.job
    assert job.starts == 2
    # stopped once 0.6 s of the second run were added to the first's 1.0 s (the 0.5 s wait not counted), within one
    # look of the watcher: before the work's own end, 3.0 s in
    assert 2.1 - 0.05 <= job.ended - job.started < 2.1 + WATCH_SECONDS + 0.4


def test_a_job_that_waited_longer_than_its_limit_and_ran_within_it_completes():
    queue = JobQueue(workers=1, time_limit=1.0)
    ticket = queue.submit("waited", "s1", runs_waits_and_runs(0.3, 2.0, 0.3), estimate=1)
    assert ticket.wait(WAIT) and ticket.result() == "finished"  # 2.6 s in all, 0.6 s of them running
    time.sleep(0.5)
    assert 0.55 <= ticket.job.running_seconds() < 1.0  # and its clock stopped when it ended
