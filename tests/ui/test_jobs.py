"""The job queue with fake jobs that start and finish when a test says so (events, not sleeps)."""
import math
import threading
import time

import pytest

from rcqa.ui.capacity import ADDRESS_JOBS_ENV, JOB_TIME_LIMIT_SECONDS, SESSION_JOBS_ENV, job_time_limit
from rcqa.ui.jobs import WATCH_SECONDS, Busy, Cancelled, ClientBusy, JobQueue, SessionBusy, Stopped

WAIT = 10  # seconds: only reached if the queue is broken


class Gate:
    """A fake job: says when it has started, then runs until released, and records the order jobs ran in."""

    def __init__(self, name: str, order: list[str]):
        self.name, self.order = name, order
        self.started, self.release = threading.Event(), threading.Event()
        self.calls = 0

    def __call__(self, report):
        self.calls += 1
        self.order.append(self.name)
        report(f"{self.name} half way")
        self.started.set()
        assert self.release.wait(WAIT)
        return f"result of {self.name}"

    def finish(self, ticket) -> str:
        self.release.set()
        assert ticket.wait(WAIT)
        return ticket.result()


@pytest.fixture
def order() -> list[str]:
    return []


def gates(order, *names):
    return gates_of(Gate, order, *names)


def gates_of(kind, order, *names):
    return [kind(name, order) for name in names]


def test_jobs_run_in_order_one_at_a_time_and_each_knows_how_many_are_ahead(order):
    queue = JobQueue(workers=1)
    a, b, c = gates(order, "a", "b", "c")
    first = queue.submit("a", "s1", a, estimate=1)
    assert a.started.wait(WAIT)
    second, third = queue.submit("b", "s2", b, estimate=1), queue.submit("c", "s3", c, estimate=1)
    assert (first.state, second.state, third.state) == ("running", "waiting", "waiting")
    assert [first.ahead(), second.ahead(), third.ahead()] == [0, 1, 2]
    assert first.progress == "a half way" and second.progress is None
    assert a.finish(first) == "result of a"
    assert b.started.wait(WAIT)
    assert [second.ahead(), third.ahead()] == [0, 1]
    b.finish(second)
    assert c.finish(third) == "result of c"
    assert order == ["a", "b", "c"] and queue.waiting == 0 and queue.running == 0


def test_two_workers_run_two_jobs_at_once(order):
    queue = JobQueue(workers=2)
    a, b, c = gates(order, "a", "b", "c")
    tickets = [queue.submit(g.name, g.name, g, estimate=1) for g in (a, b, c)]
    assert a.started.wait(WAIT) and b.started.wait(WAIT)
    assert queue.running == 2 and tickets[2].ahead() == 2 and not c.started.is_set()
    for gate, ticket in zip((a, b, c), tickets):
        gate.finish(ticket)


def test_identical_requests_are_computed_once_and_served_to_everyone(order):
    queue = JobQueue(workers=1)
    blocker, shared = gates(order, "blocker", "shared")
    first = queue.submit("blocker", "s0", blocker, estimate=1)
    assert blocker.started.wait(WAIT)
    mine = queue.submit("shared", "s1", shared, estimate=1)
    yours = queue.submit("shared", "s2", Gate("copy", order), estimate=1)
    assert queue.waiting == 1 and mine.ahead() == yours.ahead() == 1
    blocker.finish(first)
    assert shared.finish(mine) == yours.result() == "result of shared"
    assert shared.calls == 1 and order == ["blocker", "shared"]


def test_a_cancelled_request_never_runs_and_the_ones_behind_move_up(order):
    queue = JobQueue(workers=1)
    a, b, c = gates(order, "a", "b", "c")
    first = queue.submit("a", "s1", a, estimate=1)
    assert a.started.wait(WAIT)
    second, third = queue.submit("b", "s2", b, estimate=1), queue.submit("c", "s3", c, estimate=1)
    second.cancel()
    assert second.state == "cancelled" and third.ahead() == 1 and queue.waiting == 1
    with pytest.raises(Cancelled):
        second.result()
    a.finish(first)
    c.finish(third)
    assert order == ["a", "c"] and b.calls == 0


def test_a_shared_job_runs_while_anyone_still_wants_it(order):
    queue = JobQueue(workers=1)
    blocker, shared = gates(order, "blocker", "shared")
    first = queue.submit("blocker", "s0", blocker, estimate=1)
    assert blocker.started.wait(WAIT)
    mine, yours = queue.submit("shared", "s1", shared, estimate=1), queue.submit("shared", "s2", shared, estimate=1)
    mine.cancel()
    assert mine.state == "cancelled" and yours.state == "waiting"
    blocker.finish(first)
    assert shared.finish(yours) == "result of shared"


def test_a_session_has_one_request_waiting_its_newest(order):
    queue = JobQueue(workers=1)
    blocker, old, new = gates(order, "blocker", "old", "new")
    first = queue.submit("blocker", "s0", blocker, estimate=1)
    assert blocker.started.wait(WAIT)
    replaced = queue.submit("old", "s1", old, estimate=1)
    newest = queue.submit("new", "s1", new, estimate=1)
    assert replaced.state == "cancelled" and newest.ahead() == 1 and queue.waiting == 1
    blocker.finish(first)
    new.finish(newest)
    assert order == ["blocker", "new"]


def test_the_jobs_of_sessions_that_left_are_dropped_before_they_start(order):
    queue = JobQueue(workers=1)
    blocker, orphan, kept = gates(order, "blocker", "orphan", "kept")
    first = queue.submit("blocker", "s0", blocker, estimate=1)
    assert blocker.started.wait(WAIT)
    connected = {"s1": True}
    queue.submit("orphan", "s1", orphan, alive=lambda: connected["s1"], estimate=1)
    last = queue.submit("kept", "s2", kept, estimate=1)
    assert last.ahead() == 2
    connected["s1"] = False  # the tab was closed
    assert last.ahead() == 1 and queue.waiting == 1
    blocker.finish(first)
    kept.finish(last)
    assert order == ["blocker", "kept"] and orphan.calls == 0


def test_past_the_limit_new_requests_are_refused_but_identical_ones_still_join(order):
    queue = JobQueue(workers=1, limit=2)
    blocker, b, c, d = gates(order, "blocker", "b", "c", "d")
    first = queue.submit("blocker", "s0", blocker, estimate=1)
    assert blocker.started.wait(WAIT)
    waiting = [queue.submit("b", "s1", b, estimate=1), queue.submit("c", "s2", c, estimate=1)]
    with pytest.raises(Busy) as refused:
        queue.submit("d", "s3", d, estimate=1)
    assert refused.value.waiting == 2 and "2 explanations are waiting" in str(refused.value)
    joined = queue.submit("c", "s3", d, estimate=1)
    assert joined.ahead() == 2 and queue.waiting == 2
    blocker.finish(first)
    b.finish(waiting[0])
    assert c.finish(waiting[1]) == joined.result() == "result of c"
    assert d.calls == 0


def test_a_failing_job_hands_its_error_to_every_asker_and_the_queue_goes_on(order):
    queue = JobQueue(workers=1)

    def fails(report):
        raise ValueError("bad input")

    tickets = [queue.submit("bad", "s1", fails, estimate=1), queue.submit("bad", "s2", fails, estimate=1)]
    for ticket in tickets:
        assert ticket.wait(WAIT) and ticket.state == "failed"
        with pytest.raises(ValueError, match="bad input"):
            ticket.result()
    (after,) = gates(order, "after")
    assert after.finish(queue.submit("after", "s1", after, estimate=1)) == "result of after"


def test_jobs_run_at_a_lower_priority_than_the_page_scripts(monkeypatch):
    import os

    def own_niceness(report):
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    ticket = JobQueue(1).submit("nice", "s", own_niceness, estimate=1)
    assert ticket.wait(WAIT) and ticket.result() == max(base, 10)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the caller's thread keeps its own
    monkeypatch.setenv("RCQA_JOB_NICE", "15")
    ticket = JobQueue(1).submit("nicer", "s", own_niceness, estimate=1)
    assert ticket.wait(WAIT) and ticket.result() == max(base, 15)


def test_one_address_has_at_most_its_share_waiting_however_many_sessions_it_opens(order):
    queue = JobQueue(workers=1, per_client=2)
    blocker, *jobs, anonymous = gates(order, "blocker", "a", "b", "c", "other", "d")
    running = queue.submit("blocker", "s0", blocker, estimate=1)
    assert blocker.started.wait(WAIT)
    first = queue.submit("a", "s1", jobs[0], client="10.0.0.9", estimate=1)
    second = queue.submit("b", "s2", jobs[1], client="10.0.0.9", estimate=1)
    with pytest.raises(ClientBusy) as refused:
        queue.submit("c", "s3", jobs[2], client="10.0.0.9", estimate=1)  # a third session of the same address
    assert refused.value.held == 2 and isinstance(refused.value, Busy)
    # a session replacing its own request may
    replaced = queue.submit("c", "s2", jobs[2], client="10.0.0.9", estimate=1)
    assert second.state == "cancelled" and replaced.state == "waiting"
    joined = queue.submit("a", "s4", jobs[0], client="10.0.0.9", estimate=1)  # joining a waiting job adds no work
    elsewhere = queue.submit("other", "s5", jobs[3], client="10.0.0.7", estimate=1)
    unknown = queue.submit("d", "s6", anonymous, estimate=1)  # no address: the session's own limit only
    assert queue.waiting == 4 and joined.job is first.job
    blocker.finish(running)
    for gate, ticket in zip((jobs[0], jobs[2], jobs[3], anonymous), (first, replaced, elsewhere, unknown)):
        gate.finish(ticket)
    assert order == ["blocker", "a", "c", "other", "d"]


def test_an_address_holding_both_lanes_has_no_job_waiting_however_many_sessions_it_opens(order):
    queue = JobQueue(workers=1, short_workers=1, short_below=60, per_client=2)
    long, short, third, other = gates(order, "long", "short", "third", "other")
    running = [queue.submit("long", "s1", long, client="10.0.0.9", estimate=1000),
               queue.submit("short", "s2", short, client="10.0.0.9", estimate=5)]
    assert long.started.wait(WAIT) and short.started.wait(WAIT)  # both lanes, for one address
    with pytest.raises(ClientBusy, match="Your address has 2 explanations or comparisons running or waiting"):
        queue.submit("third", "s3", third, client="10.0.0.9", estimate=1)  # priced low, it would go first
    assert queue.waiting == 0
    elsewhere = queue.submit("other", "s4", other, client="10.0.0.7", estimate=1)
    assert elsewhere.state == "waiting"
    long.finish(running[0])  # one of its jobs done: the address may ask again
    after = queue.submit("third", "s3", third, client="10.0.0.9", estimate=1)
    for gate, ticket in ((short, running[1]), (other, elsewhere), (third, after)):
        assert gate.finish(ticket) == f"result of {gate.name}"


def test_a_session_holds_at_most_its_share_of_jobs_running_or_waiting(order):
    queue = JobQueue(workers=1, short_workers=1, short_below=60, per_session=2)
    long, short, third, fourth = gates(order, "long", "short", "third", "fourth")
    first = queue.submit("long", "s1", long, estimate=1000)  # no address known: the session's own share
    assert long.started.wait(WAIT)
    waiting = queue.submit("third", "s1", third, estimate=1000)  # its second job: waits behind the first
    replaced = queue.submit("fourth", "s1", fourth, estimate=1000)  # replaces the waiting one: still two
    assert waiting.state == "cancelled" and replaced.state == "waiting"
    queue.submit("short", "s2", short, estimate=5)  # another session's, in the short lane
    assert short.started.wait(WAIT)
    queue.withdraw(replaced.job, "s1")
    beside = queue.submit("short", "s1", short, estimate=5)  # joins the running short job: two running
    assert beside.state == "running"
    with pytest.raises(SessionBusy, match="You have 2 explanations or comparisons running or waiting") as refused:
        queue.submit("third", "s1", third, estimate=1)
    assert refused.value.held == 2 and queue.waiting == 0
    long.finish(first)
    short.finish(beside)


@pytest.mark.parametrize("per_session, per_address, expected", [(None, None, (2, 2)), ("1", "6", (1, 6))])
def test_the_operator_sets_the_shares_of_a_session_and_of_an_address(monkeypatch, per_session, per_address,
                                                                     expected):
    for name, value in ((SESSION_JOBS_ENV, per_session), (ADDRESS_JOBS_ENV, per_address)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    queue = JobQueue(1)
    assert (queue.per_session, queue.per_client) == expected


# --- running jobs are stopped: cancelled by everyone who asked, left by them, or past the time limit ------------

class Stoppable(Gate):
    """A fake job that runs until it is told to stop (its Running's stop event), then ends as work does."""

    def __call__(self, running):
        self.calls += 1
        self.order.append(self.name)
        self.started.set()
        assert running.stop.wait(WAIT), "the job was never told to stop"
        running.check()  # raises Stopped, as a worker's next progress report does


def test_a_running_job_cancelled_by_its_only_asker_stops_and_the_next_one_runs(order):
    queue = JobQueue(workers=1)
    (long,), (after,) = gates_of(Stoppable, order, "long"), gates(order, "after")
    running = queue.submit("long", "s1", long, estimate=1)
    assert long.started.wait(WAIT)
    waiting = queue.submit("after", "s2", after, estimate=1)
    running.cancel()
    assert running.state == "cancelled"  # this session's claim; the job itself is being stopped
    assert after.started.wait(WAIT) and running.job.state == "failed"
    with pytest.raises(Stopped, match="cancelled"):
        raise running.job.error
    assert after.finish(waiting) == "result of after" and order == ["long", "after"]


def test_a_running_job_shared_with_another_session_runs_on_when_one_cancels(order):
    queue = JobQueue(workers=1)
    (shared,) = gates(order, "shared")
    mine = queue.submit("shared", "s1", shared, estimate=1)
    assert shared.started.wait(WAIT)
    yours = queue.submit("shared", "s2", shared, estimate=1)
    mine.cancel()
    assert not mine.job.stop.is_set() and yours.state == "running"
    assert shared.finish(yours) == "result of shared"


def test_a_running_job_whose_askers_all_left_is_stopped_without_any_page_asking(order):
    queue = JobQueue(workers=1)
    (long,), (after,) = gates_of(Stoppable, order, "long"), gates(order, "after")
    connected = {"s1": True}
    running = queue.submit("long", "s1", long, alive=lambda: connected["s1"], estimate=1)
    assert long.started.wait(WAIT)
    connected["s1"] = False  # the tab was closed: nothing polls the queue from now on
    assert running.job.finished.wait(WAIT) and running.job.state == "failed"
    assert "left" in str(running.job.error)
    assert after.finish(queue.submit("after", "s2", after, estimate=1)) == "result of after"


def test_a_job_past_its_time_limit_is_stopped_with_a_sentence_saying_what_to_change(order):
    queue = JobQueue(workers=1, time_limit=0.5)
    (long,) = gates_of(Stoppable, order, "long")
    ticket = queue.submit("long", "s1", long, estimate=1)
    started = time.monotonic()
    assert ticket.wait(WAIT) and ticket.state == "failed"
    assert 0.5 <= time.monotonic() - started < 0.5 + 3 * WATCH_SECONDS + 1
    with pytest.raises(Stopped) as stopped:
        ticket.result()
    assert str(stopped.value) == ("it ran longer than 0.5 seconds, this server's limit for one job: ask for less (the "
                                  "answer's window only, or fewer steps)")


@pytest.mark.parametrize("value, seconds", [(None, JOB_TIME_LIMIT_SECONDS), ("90", 90.0), ("0", math.inf),
                                            ("off", math.inf)])
def test_the_operator_sets_the_time_limit(monkeypatch, value, seconds):
    if value is None:
        monkeypatch.delenv("RCQA_JOB_TIME_LIMIT_S", raising=False)
    else:
        monkeypatch.setenv("RCQA_JOB_TIME_LIMIT_S", value)
    assert job_time_limit() == seconds and JobQueue(1).time_limit == seconds


def test_a_long_job_lets_short_ones_that_arrive_while_it_waits_go_first_but_not_those_after_it_is_due(order,
                                                                                                    monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    queue = JobQueue(workers=1, time_limit=math.inf)
    blocker, long, short, late = gates(order, "blocker", "long", "short", "late")
    first = queue.submit("blocker", "s0", blocker, estimate=1)
    assert blocker.started.wait(WAIT)
    waiting_long = queue.submit("long", "s1", long, estimate=600)  # due at 1600
    clock[0] += 60
    waiting_short = queue.submit("short", "s2", short, estimate=10)  # due at 1070: before the long one
    clock[0] += 600
    waiting_late = queue.submit("late", "s3", late, estimate=10)  # due at 1670: after the long one
    assert [waiting_short.ahead(), waiting_long.ahead(), waiting_late.ahead()] == [1, 2, 3]
    for gate, ticket in ((blocker, first), (short, waiting_short), (long, waiting_long), (late, waiting_late)):
        gate.finish(ticket)
    assert order == ["blocker", "short", "long", "late"]


@pytest.mark.parametrize("first", ["short", "long"])
def test_a_short_and_a_long_job_asked_together_run_side_by_side_whichever_came_first(order, first):
    queue = JobQueue(workers=1, short_workers=1, short_below=60)
    jobs = dict(zip(("short", "long"), gates(order, "short", "long")))
    prices = {"short": 5, "long": 1000}
    second = "long" if first == "short" else "short"
    with queue._changed:  # (reentrant) no lane picks a job until both are queued: the race, every time
        tickets = {name: queue.submit(name, f"s-{name}", jobs[name], estimate=prices[name])
                   for name in (first, second)}
    # the main lane leaves the short job to the free short lane, so neither waits for the other to finish
    assert jobs["short"].started.wait(WAIT) and jobs["long"].started.wait(WAIT)
    assert tickets["short"].job.lane == "short" and tickets["long"].job.lane == "main"
    for name in tickets:
        jobs[name].finish(tickets[name])


def test_the_main_lane_takes_a_short_job_once_the_short_lane_is_busy(order):
    queue = JobQueue(workers=1, short_workers=1, short_below=60)
    a, b = gates(order, "a", "b")
    first = queue.submit("a", "s1", a, estimate=5)
    second = queue.submit("b", "s2", b, estimate=5)
    assert a.started.wait(WAIT) and b.started.wait(WAIT)
    assert {first.job.lane, second.job.lane} == {"short", "main"}
    a.finish(first), b.finish(second)
