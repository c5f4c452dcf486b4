"""What the pages compute, each kept where it pays: answers and lenses per model and text (st.cache_data),
explanations in the disk result cache and this session, the methods' comparison in this session. Explanations and
comparisons go through the job queue (rcqa.ui.queue); interventions and projections are quick enough to run in
the page."""
from __future__ import annotations

import streamlit as st

from rcqa import qa
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.settings import IGSettings
from rcqa.faithfulness.compare import Comparison, Protocol
from rcqa.figures import Chart, projection
from rcqa.lens import AnswerLens, answer_lens
from rcqa.lens.interventions import Interventions, intervene
from rcqa.model import QAModel
from rcqa.qa import InputError
from rcqa.types import Answer, Attribution, Example
from rcqa.ui import worker
from rcqa.ui.queue import await_ticket, heavy, pending, submit
from rcqa.ui.show import report

_RESULT, _TICKET = "rcqa.result", "rcqa.ticket"
_COMPARISON, _COMPARISON_TICKET = "rcqa.comparison", "rcqa.comparison_ticket"
_KNOCKOUTS = "rcqa.knockouts"  # the interventions this session asked for
KNOCKOUT_DRAWS = 5  # random draws per layer on the Explore page


@st.cache_data(max_entries=64, show_spinner=False)
def _answer(fingerprint: str, passage: str, question: str, _qa_model: QAModel) -> Answer:
    return qa.answer(_qa_model, passage, question)


def answer(qa_model: QAModel, current: Example) -> Answer | None:
    try:
        return _answer(qa_model.fingerprint, current.passage, current.question, qa_model)
    except InputError as error:
        report(error)
        return None


# --- explanations ------------------------------------------------------------------------------------------

@st.cache_resource
def result_cache() -> ResultCache:
    return ResultCache()


def result_key(qa_model: QAModel, current: Example, settings: IGSettings) -> str:
    return result_cache().key(qa_model.fingerprint, current, settings)


def stored_result(qa_model: QAModel, current: Example, settings: IGSettings) -> Attribution | None:
    """The result for this model, example and settings if it was computed before (this session or on disk)."""
    key = result_key(qa_model, current, settings)
    kept = st.session_state.get(_RESULT)
    if kept and kept[0] == key:
        return kept[1]
    found = result_cache().get(key)
    if found is not None:
        st.session_state[_RESULT] = (key, found)
    return found


def keep_result(key: str, result: Attribution) -> None:
    """Show this result for its key without computing it (a dataset run's own explanation)."""
    st.session_state[_RESULT] = (key, result)


def pending_request(qa_model: QAModel, current: Example, settings: IGSettings):
    """This session's request for this result (a Ticket), if it made one that is still queued, running or just
    finished."""
    return pending(_TICKET, result_key(qa_model, current, settings))


def compute_result(qa_model: QAModel, current: Example, settings: IGSettings) -> Attribution | None:
    """Explain every layer through the queue, resuming this session's request if it made one, with its place in
    line and then its progress layer by layer; None (with a message shown) when the queue is full or the
    explanation fails."""
    key = result_key(qa_model, current, settings)
    ticket = pending(_TICKET, key) or submit(
        _TICKET, key, heavy(qa_model, worker.explanation, current, settings, result_cache()))
    if ticket is None:
        return None
    total = qa_model.num_layers + 1

    def finished(found: tuple[Attribution, bool]) -> str:
        result, hit = found
        origin = "from the result cache" if hit else f"in {result.seconds:.1f} s"
        return f"Attributed {total} layers of {qa_model.name} {origin}"

    found = await_ticket(ticket, _TICKET, f"Attributing {total} layers of {qa_model.name}…",
                         "The explanation failed", finished,
                         progress=(f"layer 0/{total} done", lambda done: (
                             (done.layer + 1) / total,
                             f"layer {done.layer + 1}/{total} done ({done.label}, {done.seconds:.1f} s)")))
    if found is None:
        return None
    keep_result(key, found[0])
    return found[0]


# --- the methods' comparison ---------------------------------------------------------------------------------

def comparison_key(qa_model: QAModel, current: Example, settings: IGSettings, protocol: Protocol) -> str:
    return f"methods-{protocol.operator}-{protocol.spare_answer}-{result_key(qa_model, current, settings)}"


def stored_comparison(qa_model: QAModel, current: Example, settings: IGSettings,
                      protocol: Protocol) -> Comparison | None:
    """The methods' comparison on this example, if this session computed it."""
    kept = st.session_state.get(_COMPARISON)
    return kept[1] if kept and kept[0] == comparison_key(qa_model, current, settings, protocol) else None


def pending_comparison(qa_model: QAModel, current: Example, settings: IGSettings, protocol: Protocol) -> bool:
    """Whether this session asked for this comparison and it is still queued, running or just finished."""
    return pending(_COMPARISON_TICKET, comparison_key(qa_model, current, settings, protocol)) is not None


def compute_comparison(qa_model: QAModel, current: Example, settings: IGSettings,
                       protocol: Protocol) -> Comparison | None:
    """Compare the attribution methods through the queue (it is as heavy as an explanation), showing the
    request's place in line with a Cancel button, or resuming this session's request; None, with a message
    shown, when the queue is full, the request was cancelled or the comparison fails."""
    key = comparison_key(qa_model, current, settings, protocol)
    ticket = pending(_COMPARISON_TICKET, key) or submit(
        _COMPARISON_TICKET, key, heavy(qa_model, worker.comparison, current, settings, protocol))
    if ticket is None:
        return None
    comparison = await_ticket(
        ticket, _COMPARISON_TICKET,
        "Scoring the words with every method, then re-answering with each method's top words deleted…",
        "The comparison failed", lambda _: "Compared the methods")
    if comparison is not None:
        st.session_state[_COMPARISON] = (key, comparison)
    return comparison


# --- what each layer knows and does ------------------------------------------------------------------------

@st.cache_data(max_entries=64, show_spinner="Reading the answer out of every layer…")
def _lens(fingerprint: str, passage: str, question: str, golds: tuple[str, ...], _qa_model: QAModel,
          _example: Example) -> AnswerLens:
    return answer_lens(_qa_model, _example)


def lens(qa_model: QAModel, current: Example) -> AnswerLens | None:
    """The answer lens of the example: one forward pass, so computed on demand and kept per model and text."""
    try:
        return _lens(qa_model.fingerprint, current.passage, current.question,
                     tuple(a.text for a in current.answers), qa_model, current)
    except InputError as error:
        report(error)
        return None


def knockouts_asked(request: tuple) -> bool:
    """Whether this session asked for the interventions of (result key, k, baseline, aggregation)."""
    return request in st.session_state.get(_KNOCKOUTS, set())


def ask_knockouts(request: tuple) -> None:
    st.session_state.setdefault(_KNOCKOUTS, set()).add(request)


@st.cache_data(max_entries=32, show_spinner="Knocking out each layer's words…")
def _knockouts(key: str, k: int, baseline: str, aggregation: str, _qa_model: QAModel,
               _result: Attribution) -> Interventions:
    return intervene(_qa_model, _result, k=k, draws=KNOCKOUT_DRAWS, baseline=baseline, aggregation=aggregation)


def knockouts(qa_model: QAModel, result: Attribution, request: tuple) -> Interventions | None:
    """The interventions asked for (knockouts_asked's request), kept per result and settings; None, with the error
    shown, when they cannot run."""
    try:
        return _knockouts(*request, qa_model, result)
    except ValueError as error:
        report(error)
        return None


@st.cache_data(max_entries=32, show_spinner="Projecting the token vectors…")
def projection_chart(key: str, layer: int, method: str, _result: Attribution) -> Chart:
    """t-SNE is slow on long inputs: keep each layer's map per result (key) and method."""
    return projection(_result, layer, method)
