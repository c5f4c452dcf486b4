"""The attribution methods' comparison on one example: priced, computed through the queue and kept in this
session."""
from __future__ import annotations

import streamlit as st

from rcqa.attribution.cost import Price, point_memory_mb, worst_case
from rcqa.attribution.methods import COMPARED
from rcqa.attribution.settings import ExplainSettings
from rcqa.faithfulness.compare import Comparison, Protocol
from rcqa.faithfulness.cost import comparison_seconds
from rcqa.model import QAModel
from rcqa.types import Example
from rcqa.ui import drawn, worker
from rcqa.ui.queue import await_ticket, heavy, pending, submit
from rcqa.ui.results.answers import answer, window_tokens
from rcqa.ui.results.explanations import result_key
from rcqa.ui.results.requested import told


_COMPARISON, _COMPARISON_TICKET = "rcqa.comparison", "rcqa.comparison_ticket"


def comparison_key(qa_model: QAModel, current: Example, settings: ExplainSettings, protocol: Protocol) -> str:
    return f"methods-{protocol.operator}-{protocol.spare_answer}-{result_key(qa_model, current, settings)}"


def stored_comparison(qa_model: QAModel, current: Example, settings: ExplainSettings,
                      protocol: Protocol) -> Comparison | None:
    """The methods' comparison on this example, if this session computed it."""
    kept = st.session_state.get(_COMPARISON)
    return kept[1] if kept and kept[0] == comparison_key(qa_model, current, settings, protocol) else None


def pending_comparison(qa_model: QAModel, current: Example, settings: ExplainSettings, protocol: Protocol) -> bool:
    """Whether this session asked for this comparison and it is still queued, running or just finished."""
    return pending(_COMPARISON_TICKET, comparison_key(qa_model, current, settings, protocol)) is not None


def comparison_price(qa_model: QAModel, current: Example, settings: ExplainSettings, protocol: Protocol) -> Price | None:
    """The comparison's price on this server (rcqa.faithfulness.cost), at worst with IG refined to max_steps; None
    where the answer is not known yet (it is then being computed, with its own message)."""
    if (found := answer(qa_model, current)) is None:
        return None
    tokens = window_tokens(qa_model, current, found)
    expected, worst = (comparison_seconds(qa_model, chosen, COMPARED, protocol, tokens)
                       for chosen in (settings, worst_case(settings)))
    return Price(expected, worst, point_memory_mb(qa_model, tokens))


def compute_comparison(qa_model: QAModel, current: Example, settings: ExplainSettings,
                       protocol: Protocol, estimate: Price) -> Comparison | None:
    """Compare the attribution methods through the queue, priced at `estimate`, showing the request's place
    in line with a Cancel button, or resuming this session's request; None, with a message shown, when the queue is
    full, the request was cancelled or the comparison fails."""
    key = comparison_key(qa_model, current, settings, protocol)
    ticket = pending(_COMPARISON_TICKET, key) or submit(
        _COMPARISON_TICKET, key, heavy(qa_model, worker.comparison, current, settings, protocol), estimate)
    if ticket is None:
        return None
    comparison = await_ticket(
        ticket, _COMPARISON_TICKET,
        "Scoring the words with every method, then re-answering with each method's top words deleted…",
        "The comparison failed", lambda _: "Compared the methods", progress=("scoring with the first method", told))
    if comparison is not None:
        comparison = drawn.seen_by(comparison, current)
        st.session_state[_COMPARISON] = (key, comparison)
    return comparison
