"""Work a visitor asks for with a button, computed through the queue: the button (ask_button), and queued, which runs
a function of the model in the worker processes and keeps this session's last few values."""
from __future__ import annotations

from typing import Any

import streamlit as st

from rcqa.attribution.cost import Price
from rcqa.model import QAModel
from rcqa.types import Example
from rcqa.ui import drawn
from rcqa.ui.queue import await_ticket, heavy, pending, submit
from rcqa.ui.show import callback


_ASKED, _KEPT = "rcqa.asked", "rcqa.kept"  # the lenses, interventions and maps this session asked for, and got
KEPT_RESULTS = 8


def asked(request: tuple) -> bool:
    """Whether this session pressed the button for request (its first item names the kind of work)."""
    return request in st.session_state.get(_ASKED, set())


def ask(request: tuple) -> None:
    st.session_state.setdefault(_ASKED, set()).add(request)


def ask_button(request: tuple, label: str, what_it_does: str) -> bool:
    """Whether request was asked for; else its button, with what it does, is drawn and False returned."""
    if asked(request):
        return True
    st.button(label, key=f"rcqa.ask.{request[0]}", on_click=callback(ask), args=(request,))
    st.caption(what_it_does)
    return False


def told(done: tuple[float, str]) -> tuple[float, str]:
    """A progress report of a job that tells its share done and where it is (rcqa.ui.worker: the methods'
    comparison, the sanity check, the heads): the bar's fraction and text as they are."""
    return done


def queued(request: tuple, qa_model: QAModel, function, *args, label: str, estimate: Price,
           first_step: str | None = None, shown: Example | None = None) -> Any | None:
    """function(qa_model, *args) computed through the queue for request (kept with this session's last few
    results), priced at `estimate`; None, with a message shown, when the queue is full or the work
    fails. `first_step`: for a job that tells its progress (told), the bar's text until its first report. `shown`:
    the example this session shows, which the value is made to hold (drawn.seen_by) where it holds one."""
    kept: dict = st.session_state.setdefault(_KEPT, {})
    if request in kept:
        return kept[request] if shown is None else drawn.seen_by(kept[request], shown)
    slot, key = f"rcqa.ticket.{request[0]}", "-".join(map(str, request))
    ticket = pending(slot, key) or submit(slot, key, heavy(qa_model, function, *args), estimate)
    if ticket is None:
        return None
    found = await_ticket(ticket, slot, label, f"{label} failed", lambda _: label.removesuffix("…"),
                         progress=None if first_step is None else (first_step, told))
    if found is not None:
        while len(kept) >= KEPT_RESULTS:
            kept.pop(next(iter(kept)))
        kept[request] = found
    return found if found is None or shown is None else drawn.seen_by(found, shown)
