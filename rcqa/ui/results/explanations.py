"""Explanations: kept in the disk result cache and this session (or shipped with the package), keyed once per
model, example and settings, and computed through the queue on a click, with their place in line and then their
progress layer by layer."""
from __future__ import annotations

import functools

import streamlit as st

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.cost import Price
from rcqa.attribution.engine import LayerResult
from rcqa.attribution.layerwise import layerwise_method
from rcqa.attribution.passage import WindowProgress
from rcqa.attribution.progress import explained_fraction
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.shipped import shipped_result
from rcqa.catalog import shown_name
from rcqa.model import QAModel
from rcqa.types import Attribution, Example
from rcqa.ui import drawn, worker
from rcqa.ui.drawn import HeatmapView, ResultCharts
from rcqa.ui.queue import await_ticket, heavy, pending, submit, was_cancelled
from rcqa.ui.results.answers import reading
from rcqa.ui.results.prices import affordable_price
from rcqa.ui.visitors import session_id


_RESULT, _TICKET = "rcqa.result", "rcqa.ticket"


@st.cache_resource
def result_cache() -> ResultCache:
    return ResultCache()


def result_key(qa_model: QAModel, current: Example, settings: ExplainSettings) -> str:
    """The result cache's key of the explanation (ResultCache.key), kept for the last few: a page asks for it in
    several places a run, and hands it to the job."""
    return _result_key(qa_model.fingerprint, current, settings)


@functools.lru_cache(maxsize=32)
def _result_key(fingerprint: str, current: Example, settings: ExplainSettings) -> str:
    return ResultCache.key(fingerprint, current, settings)  # a function of its arguments alone


def stored_result(qa_model: QAModel, current: Example, settings: ExplainSettings, side: str = "") -> Attribution | None:
    """The result for this model, example and settings if it was computed before (this session or on disk) or
    shipped with the package (the gallery's, as the page opens: rcqa.attribution.shipped); `side` names a second
    result kept beside the first (the side-by-side view's)."""
    key = result_key(qa_model, current, settings)
    found = _found(qa_model, current, key, side)
    if found is not None:
        keep_result(key, found, side)
    return found


def _found(qa_model: QAModel, current: Example, key: str, side: str = "") -> Attribution | None:
    """The result kept under `key`: this session's, the cache's or the package's; None where none is."""
    kept = st.session_state.get(_RESULT + side)
    if kept and kept[0] == key:
        return kept[1]
    return result_cache().result_for(current, key) or shipped_result(qa_model, current, key)


def kept_result(side: str = "") -> Attribution | None:
    """The result this session showed last (on `side`), whatever its settings; None before any."""
    kept = st.session_state.get(_RESULT + side)
    return kept[1] if kept else None


def keep_result(key: str, result: Attribution, side: str = "") -> None:
    """Show this result for its key without computing it (a dataset run's own explanation)."""
    st.session_state[_RESULT + side] = (key, result)


def pending_request(qa_model: QAModel, current: Example, settings: ExplainSettings, side: str = ""):
    """This session's request for this result (a Ticket), if it made one that is still queued, running or just
    finished."""
    return pending(_TICKET + side, result_key(qa_model, current, settings))


def compute_result(qa_model: QAModel, current: Example, settings: ExplainSettings, side: str = "",
                   first_view: HeatmapView | None = None, price: Price | None = None) -> Attribution | None:
    """Explain every layer through the queue, resuming this session's request if it made one, with its place in
    line and then its progress layer by layer; None (with a message shown) when the queue is full or the
    explanation fails. `side`: as for stored_result (each side has its own request). `first_view`: the heatmap tab
    the page draws first, drawn by the worker process with the result and kept for it (rcqa.ui.drawn). `price`: the
    explanation's, where the caller priced it already."""
    key, slot = result_key(qa_model, current, settings), _TICKET + side
    ticket = pending(slot, key) or _submitted(qa_model, current, settings, key, slot, first_view, price)
    if ticket is None:
        return None
    blocks, name = qa_model.num_layers, shown_name(qa_model.name)
    total, expected = blocks + 1, layerwise_method(settings.method).path_points(settings, blocks)

    def finished(found: tuple[Attribution, bool, ResultCharts | None]) -> str:
        result, hit, _ = found
        origin = "from the result cache" if hit else f"in {result.seconds:.1f} s"
        return f"Attributed {total} layers of {name} {origin}"

    found = await_ticket(ticket, slot, f"Attributing {total} layers of {name}…",
                         "The explanation failed", finished,
                         progress=(f"layer 0/{total} done", lambda done: _progress(done, blocks, expected)))
    if found is None:
        return None
    result, _, charts = found
    result = drawn.seen_by(result, current)
    if charts is not None:
        drawn.keep(key, current, charts, session_id())
    keep_result(key, result, side)
    return result


def _submitted(qa_model: QAModel, current: Example, settings: ExplainSettings, key: str, slot: str,
               first_view: HeatmapView | None, price: Price | None):
    """The explanation queued (a Ticket) with its key, its price (affordable_price, unless given) and the example's
    reading, which the worker takes instead of working them out again; None, with the reason shown, otherwise."""
    if (found := reading(qa_model, current)) is None:
        return None
    if price is None and (price := affordable_price(qa_model, current, settings)) is None:
        return None
    request = worker.ExplanationRequest(current, settings, key, found, first_view)
    return submit(slot, key, heavy(qa_model, worker.explanation, request, result_cache()), estimate=price)


def _progress(done: LayerResult | WindowProgress, blocks: int, expected_points: float) -> tuple[float, str]:
    """The bar's fraction of the work (rcqa.attribution.progress) and its text, for a finished layer or for a window
    done within a whole-passage layer (its pass and path points: the adaptive rule runs several passes a layer)."""
    fraction, total = explained_fraction(done, blocks, expected_points), blocks + 1
    if isinstance(done, WindowProgress):
        return fraction, f"layer {done.layer}/{total} done; {done.describe(expected_points)}"
    return fraction, f"layer {done.layer + 1}/{total} done ({done.label}, {done.seconds:.1f} s)"


def result_on_click(qa_model: QAModel, current: Example, settings: ExplainSettings,
                    explained: str = "the answer", first_view: HeatmapView | None = None) -> Attribution | None:
    """The explanation if it is stored, else, once "Explain every layer" is pressed (or this session's request is
    still under way: its place, then its progress), computed through the queue; None until then. `explained` says
    what the button attributes, and how long it is expected to take; an explanation over the server's budget
    (rcqa.ui.capacity.refusal: its time, or one path point's memory) is refused instead, with what to change.
    `first_view`: as for compute_result. The price is worked out once a run, and handed on."""
    if (result := stored_result(qa_model, current, settings)) is not None:
        return result
    price = None
    if pending_request(qa_model, current, settings) is None:
        if (price := affordable_price(qa_model, current, settings)) is None:
            return None
        if was_cancelled(_TICKET):
            st.info("Cancelled.")  # where the result would have been
        slot = st.empty()
        if not slot.button("Explain every layer", type="primary", key="rcqa.explain"):
            st.caption(f"Attributes {explained} at the output of all {qa_model.num_layers + 1} layers of "
                       f"{shown_name(qa_model.name)}: {price.in_words()} on this server.")
            return None
        slot.empty()
    return compute_result(qa_model, current, settings, first_view=first_view, price=price)
