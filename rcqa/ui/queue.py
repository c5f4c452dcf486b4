"""The heavy jobs of every session, through one queue (rcqa.ui.jobs) whose jobs run in worker processes
(rcqa.ui.worker): submitting a request, and waiting for it with its place in line, a Cancel button and its
progress."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from rcqa.attribution.cost import Price
from rcqa.attribution.memory import checkpoints
from rcqa.model import QAModel
from rcqa.ui import worker
from rcqa.ui.capacity import (default_workers, job_gpus, limit_torch_threads, refusal, short_job_seconds,
                              short_workers, torch_threads)
from rcqa.ui.jobs import Busy, JobQueue, Running, SessionBusy, Ticket, Unpriced, Work, check_price
from rcqa.ui.errors import callback, failure, report
from rcqa.ui.view import default_model
from rcqa.ui.visitors import client_address

POLL_SECONDS = 0.5  # how often a waiting page refreshes its place in the queue and the running job's progress


def _gpus() -> list[str]:
    """The GPUs the jobs spread over: all of job_gpus() in worker processes, the server's one in its threads."""
    gpus = job_gpus()
    return gpus if worker.processes_enabled() else gpus[:1]


@st.cache_resource
def job_queue() -> JobQueue:
    """The process's one queue of explanations, shared by every session, with its short lane
    (rcqa.ui.capacity.short_workers, short_job_seconds)."""
    workers = default_workers(len(_gpus()))
    limit_torch_threads(workers)
    return JobQueue(workers, short_workers=short_workers(), short_below=short_job_seconds())


@st.cache_resource
def worker_processes() -> worker.WorkerProcesses | None:
    """The processes the queue's jobs run in (rcqa.ui.worker), one per GPU where there are GPUs, or None where
    $RCQA_JOB_PROCESSES is 0."""
    if not worker.processes_enabled():
        return None
    gpus = _gpus()
    workers = default_workers(len(gpus))
    return worker.WorkerProcesses(workers, torch_threads(workers), preload=default_model(), gpus=gpus)


def heavy(qa_model: QAModel | None, function: Callable, *args) -> Work:
    """The job that runs function(qa_model, *args, report): in a worker process (inside a busy one's long task, for
    the short lane, where none is idle), or in the queue's thread; either stops at its next checkpoint (between
    chunks, at a progress report) once the queue stops it. A worker process's task that has none (an image) runs on
    to its end with its result dropped where it shares its process, and is ended with its process where it runs
    there alone (rcqa.ui.worker.process). With no model (work that needs none, such as drawing an image), function gets None and
    no worker loads one for it."""
    task = (worker.Task(function, "", "", "cpu", args) if qa_model is None else
            worker.Task(function, qa_model.name, qa_model.fingerprint, str(qa_model.device), args))
    processes = worker_processes()
    if processes is None:
        return lambda running: _in_this_thread(task, qa_model, running)
    return lambda running: processes.run(task, running, running.stop, short=running.short, timing=running)


def _in_this_thread(task: worker.Task, qa_model: QAModel | None, running: Running) -> Any:
    running.began()  # counted as a worker's start is, so that a job's starts mean the same in either road
    with checkpoints(running.check):
        return task.run(qa_model, running.checked)


def _session() -> tuple[str, Callable[[], bool]]:
    """This session's id, and whether it is still connected (a closed tab's waiting job is then dropped)."""
    context = get_script_run_ctx()
    assert context is not None  # called from a page, inside a script run (an AppTest's too)
    session = context.session_id
    if not runtime.exists():  # run by a test harness, with no server around it
        return session, lambda: True
    server = runtime.get_instance()
    return session, lambda: server.is_active_session(session)


def pending(slot: str, key: str) -> Ticket | None:
    """This session's request kept in session slot `slot`, if it is for `key` and still queued, running or just
    finished."""
    ticket = st.session_state.get(slot)
    return ticket if ticket and ticket.key == key and ticket.state != "cancelled" else None


def submit(slot: str, key: str, work: Work, estimate: Price) -> Ticket | None:
    """Queue the work at its price `estimate` (or join an identical request), and keep its ticket in session slot
    `slot`; None, with a message, when the queue is full (or the visitor's share of it: jobs running or waiting
    for the session, or its address, rcqa.ui.jobs.SessionBusy), or the job is over the server's budget of time or
    of a path point's memory (rcqa.ui.capacity.refusal: a page says so, with what to change, before it offers the
    job; this is the last word). A job without a price is refused
    (rcqa.ui.jobs.Unpriced): a page that forgot one fails loudly."""
    if not isinstance(estimate, Price):
        raise Unpriced(f"the job {key[:80]!r} has no price: {estimate!r} is no rcqa.attribution.cost.Price")
    check_price(key, estimate.seconds, estimate.worst)
    if (refused := refusal("job", estimate, "ask for less")) is not None:
        st.warning(refused)
        return None
    session, alive = _session()
    try:
        ticket = job_queue().submit(key, session, work, alive,
                                    client=client_address(st.context.ip_address, st.context.headers),
                                    estimate=estimate.seconds, worst=estimate.worst)
    except SessionBusy as busy:  # the session's share, or its address's (ClientBusy): the sentence says which
        st.warning(str(busy))
        return None
    except Busy as busy:
        st.warning(f"The server is busy: {busy.waiting} explanations or comparisons are waiting, the most it "
                   "queues. Try again in a minute.")
        return None
    st.session_state[slot] = ticket
    return ticket


_CANCELLED = ".cancelled"  # after a slot's name: its request was cancelled, which the page has not said yet


def cancel_request(slot: str) -> None:
    if ticket := st.session_state.pop(slot, None):
        ticket.cancel()
        st.session_state[slot + _CANCELLED] = True


def was_cancelled(slot: str) -> bool:
    """Whether the request in session slot `slot` was cancelled since this was last asked (so it is said once)."""
    return st.session_state.pop(slot + _CANCELLED, False)


def await_ticket(ticket: Ticket, slot: str, label: str, failed: str, finished: Callable[[Any], str],
                 progress: tuple[str, Callable[[Any], tuple[float, str]]] | None = None) -> Any | None:
    """Inside a status box labelled `label`: the request's place in the queue with a Cancel button (which withdraws
    the request kept in slot `slot`), then, given `progress` (the bar's first text, and the bar's fraction and
    text for a progress report), a progress bar, refreshed until the job finishes. Its result, the box labelled
    finished(result); None, with the box labelled `failed` and one sentence shown (the server's own errors are
    logged, never shown), when it fails."""
    with st.status(label, expanded=True) as status:
        place, cancel = st.empty(), st.empty()
        show_progress: Callable[[Any], object] = lambda done: None  # noqa: E731
        if progress is not None:
            first, fraction_and_text = progress
            bar = st.progress(0.0, text=first)
            show_progress = lambda done: bar.progress(*fraction_and_text(done))  # noqa: E731
        _wait_for(ticket, place, cancel, f"{slot}.cancel", slot, show_progress)
        try:
            result = ticket.result()
        except ValueError as error:  # InputError included: the user's to fix
            status.update(label=failed, state="error", expanded=True)  # the sentence is what the user reads
            report(error)
            return None
        except Exception as error:  # the server's: a worker that died, a cancellation, a full disk, a model load
            status.update(label=failed, state="error", expanded=True)
            failure(error, "The job")
            return None
        finally:
            st.session_state.pop(slot, None)
        status.update(label=finished(result), state="complete", expanded=False)
    return result


def _wait_for(ticket: Ticket, place, cancel, cancel_key: str, slot: str,
              show_progress: Callable[[Any], object]) -> None:
    """Until the ticket's job has finished: its place in the queue, then its progress, each redrawn when it changes,
    with a Cancel button (a running job nobody else waits for is then stopped: rcqa.ui.jobs)."""
    if ticket.state in ("waiting", "running"):
        cancel.button("Cancel", key=cancel_key, on_click=callback(cancel_request, "Cancelling"), args=(slot,))
    shown = None
    while not ticket.wait(POLL_SECONDS):
        shown = _show_progress(ticket, place, show_progress, shown)
    _show_progress(ticket, place, show_progress, shown)
    cancel.empty()


def _show_progress(ticket: Ticket, place, show_progress: Callable[[Any], object],
                   shown: tuple | None) -> tuple | None:
    """Draw the request's place in the queue, or its progress, if it changed since `shown` (what was drawn last):
    every redraw is a message to the browser, and eight waiting pages redrawing twice a second cost the server
    and the browsers CPU that a new visitor's page needs."""
    state = ("waiting", ticket.ahead()) if ticket.state == "waiting" else ("running", ticket.progress)
    if _unchanged(state, shown):
        return shown
    if state[0] == "waiting":
        ahead = state[1]
        plural = "s" if ahead != 1 else ""
        place.info(f"Queued: {ahead} explanation{plural} or comparison{plural} ahead of yours.")
        return state
    place.empty()
    if (done := ticket.progress) is not None:
        show_progress(done)
    return state


def _unchanged(state: tuple, shown: tuple | None) -> bool:
    """The same place in line, or the same layer result (an object holding arrays: compared by identity)."""
    if shown is None or state[0] != shown[0]:
        return False
    return state[1] == shown[1] if state[0] == "waiting" else state[1] is shown[1]
