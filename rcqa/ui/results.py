"""What the pages compute, each kept where it pays: answers per model and text (st.cache_data; a long passage's
through the job queue, kept in this session), explanations in the disk result cache and this session, the methods'
comparison in this session. Explanations and comparisons, and on a click the answer lens, the interventions and the
token maps, go through the job queue (rcqa.ui.queue), which runs them in its worker processes."""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import streamlit as st

from rcqa import qa
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.cost import Price, explanation_price, point_memory_mb, worst_case
from rcqa.attribution.engine import LayerResult
from rcqa.attribution.layerwise import layerwise_method
from rcqa.attribution.passage import WindowProgress
from rcqa.attribution.progress import explained_fraction
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.shipped import shipped_result
from rcqa.catalog import shown_name
from rcqa.attribution.methods import COMPARED
from rcqa.faithfulness.compare import Comparison, Protocol
from rcqa.faithfulness.cost import comparison_seconds
from rcqa.analysis.projection import projection_seconds
from rcqa.figures import Chart, projection_map
from rcqa.lens import AnswerLens
from rcqa.lens.cost import interventions_seconds, lens_seconds, margins_seconds
from rcqa.lens.interventions import Interventions
from rcqa.model import QAModel
from rcqa.qa import InputError
from rcqa.types import Answer, Attribution, Example
from rcqa.ui import drawn, worker
from rcqa.ui.capacity import reading_price, refusal
from rcqa.ui.drawn import HeatmapView, ResultCharts
from rcqa.ui.queue import await_ticket, heavy, pending, submit, was_cancelled
from rcqa.ui.show import callback, report
from rcqa.ui.visitors import session_id

_RESULT, _TICKET = "rcqa.result", "rcqa.ticket"
_COMPARISON, _COMPARISON_TICKET = "rcqa.comparison", "rcqa.comparison_ticket"
_ASKED, _KEPT = "rcqa.asked", "rcqa.kept"  # the lenses, interventions and maps this session asked for, and got
KEPT_RESULTS = 8
KNOCKOUT_DRAWS = 5  # random draws per layer on the Explore page
# answered in the page thread: the default model's answer takes 0.10-0.36 s for one or two windows on one core
ANSWERED_HERE_CHARS, ANSWERED_HERE_WINDOWS = 4_000, 2


@st.cache_data(max_entries=64, show_spinner=False)
def _reading(fingerprint: str, passage: str, question: str, _qa_model: QAModel) -> qa.Reading:
    return qa.read(_qa_model, passage, question)


@st.cache_data(max_entries=64, show_spinner=False)
def _window_lengths(fingerprint: str, passage: str, question: str, _qa_model: QAModel) -> tuple[int, ...]:
    """The tokens of each window the example is read in: tokenised once per model and text, however many times a
    run asks (whether to answer here, a price)."""
    return tuple(int(n) for n in qa.encode(_qa_model, question, passage).inputs["attention_mask"].sum(dim=1))


def answer(qa_model: QAModel, current: Example) -> Answer | None:
    """The model's answer (reading's); None, with one sentence shown, for input it cannot answer."""
    return None if (found := reading(qa_model, current)) is None else found.answer


def reading(qa_model: QAModel, current: Example) -> qa.Reading | None:
    """The model's answer with its logits (rcqa.qa.read), which an explanation of the example is handed: in the page
    thread for a passage of a window or two (the gallery's, a SQuAD paragraph, most pastes: well under a second, and
    kept per model and text), else through the queue, since a 128-window paste costs a core 17-23 s; None, with one
    sentence shown, for input it cannot answer. Oversize input is refused before anything reads it."""
    try:
        qa.validate_size(current.passage, current.question)
        if _answered_here(qa_model, current):
            return _reading(qa_model.fingerprint, current.passage, current.question, qa_model)
    except InputError as error:
        report(error)
        return None
    text = qa.text_digest(current.passage, current.question)
    return queued(("answer", qa_model.fingerprint, text), qa_model, worker.reading, current.passage,
                  current.question, label="Reading the passage…",
                  estimate=reading_price(qa_model, current.passage, current.question),
                  first_step="reading the windows")


def answer_ahead(qa_model: QAModel, examples: Sequence[Example]) -> None:
    """Answer now those of the examples a page answers itself (the gallery's), so that a new visitor's first page
    finds its answer ready, even under load."""
    for example in examples:
        if _answered_here(qa_model, example):
            _reading(qa_model.fingerprint, example.passage, example.question, qa_model)


def _answered_here(qa_model: QAModel, current: Example) -> bool:
    """Whether the passage is short enough to answer in the page thread: at most ANSWERED_HERE_CHARS characters
    (so that tokenising it to count its windows is cheap too) and ANSWERED_HERE_WINDOWS windows."""
    return (len(current.passage) <= ANSWERED_HERE_CHARS
            and len(_window_lengths(qa_model.fingerprint, current.passage, current.question, qa_model))
            <= ANSWERED_HERE_WINDOWS)


# --- explanations ------------------------------------------------------------------------------------------

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


def explanation_price_of(qa_model: QAModel, current: Example, settings: ExplainSettings) -> Price | None:
    """What explaining the example with these settings costs on this server (rcqa.attribution.cost): every window of
    the passage, or the answer's, whose tokens are counted where it is the only one (a longer passage's windows are
    full), after reading every window to answer. None, with the reason shown, where the model cannot read the
    example."""
    found = answer(qa_model, current)
    if found is None:
        return None
    windows = found.n_windows if settings.windows == "all" else 1
    return explanation_price(qa_model, settings, windows, window_tokens(qa_model, current, found), found.n_windows)


def window_tokens(qa_model: QAModel, current: Example, found: Answer) -> int:
    """The tokens of a window of the example: counted where it is the passage's only one (a longer passage's windows
    are full)."""
    if found.n_windows == 1:
        return _window_lengths(qa_model.fingerprint, current.passage, current.question, qa_model)[0]
    return qa_model.max_len


def affordable_price(qa_model: QAModel, current: Example, settings: ExplainSettings) -> Price | None:
    """The explanation's price if the server takes it (rcqa.ui.capacity.refusal: its expected seconds within the time
    budget, one path point within the memory budget); None, with the reason shown (what to change), otherwise."""
    if (price := explanation_price_of(qa_model, current, settings)) is None:
        return None
    return price if within_budget("explanation", price, explanation_change(settings)) else None


# how a passage too long for one job is explained all the same: by the CLI on one's own machine, or by a dataset run
WHOLE_PASSAGE_OFFLINE = ("`python -m rcqa explain --passage-file PASSAGE.txt --question QUESTION --windows all "
                         "--json OUT.json` explains it on your own machine, and a dataset run (`python -m rcqa "
                         "reproduce --data FILE.json --out RUN --windows all`) explains every question of a file")


def explanation_change(settings: ExplainSettings) -> str:
    """What to change to make an explanation cheaper (and, for a whole passage, where it can be explained
    instead)."""
    return (f"explain the answer's window only (Windows explained); {WHOLE_PASSAGE_OFFLINE}"
            if settings.windows == "all" else "choose fewer steps, or a preset with fewer")


def within_budget(job: str, price: Price, change: str) -> bool:
    """Whether the job fits the server: one path point within its memory budget, its expected seconds within its
    time budget; else the one sentence refusing it, naming what to change, is shown (rcqa.ui.capacity.refusal)."""
    if (refused := refusal(job, price, change)) is not None:
        st.warning(refused)
        return False
    return True


# --- the methods' comparison ---------------------------------------------------------------------------------

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


# --- what each layer knows and does, on request ------------------------------------------------------------

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


def result_window_tokens(qa_model: QAModel, result: Attribution) -> int:
    """The tokens of a window of the result's example (window_tokens)."""
    return window_tokens(qa_model, result.example, result.answer)


def lens(qa_model: QAModel, result: Attribution, key: str) -> AnswerLens | None:
    """The answer lens of the result's example, once asked for: one forward pass, through the queue."""
    request = ("lens", key)
    if not ask_button(request, "Read the answer out of every layer",
                      "Runs the QA head (and any probes trained for this model) on every layer's output: one "
                      "forward pass."):
        return None
    price = Price(lens_seconds(qa_model, result.answer.n_windows, result_window_tokens(qa_model, result)))
    return queued(request, qa_model, worker.lens, result.example, label="Reading the answer out of every layer…",
                  estimate=price, shown=result.example, first_step="answering")


def contrast_margins(qa_model: QAModel, result: Attribution, key: str):
    """A contrast's lens margin per layer (a forward pass of one or two windows, through the queue); None for a
    result without a contrast."""
    if (foil := result.targets[0].foil) is None:
        return None
    windows = len({result.window, foil.window})
    price = Price(margins_seconds(qa_model, windows, result_window_tokens(qa_model, result)))
    return queued(("contrast", key), qa_model, worker.contrast_margins, result,
                  label="Reading the answer's margin over the foil at every layer…", estimate=price,
                  shown=result.example)


def knockouts(qa_model: QAModel, result: Attribution, request: tuple) -> Interventions | None:
    """The interventions of request ("knockouts", result key, k, baseline, aggregation), once asked for."""
    _, _, k, baseline, aggregation = request
    price = Price(interventions_seconds(qa_model, result_window_tokens(qa_model, result), KNOCKOUT_DRAWS, baseline))
    return queued(request, qa_model, worker.knockouts, result, k, KNOCKOUT_DRAWS, baseline, aggregation,
                  label="Knocking out each layer's words…", estimate=price, shown=result.example)


def projection_chart(qa_model: QAModel, key: str, layer: int, method: str, result: Attribution) -> Chart | None:
    """The map of one layer's token vectors, once asked for: t-SNE is slow on long inputs."""
    request = ("projection", key, layer, method)
    if not ask_button(request, "Map the token vectors", "Projects every token's vector at this layer to two "
                      "dimensions (t-SNE takes a while on long passages)."):
        return None
    if result.hidden_states is None:
        report(ValueError("this result holds no layer outputs (hidden states); explain it again to project them"))
        return None
    vectors = result.hidden_states[layer]
    projected = queued(request, qa_model, worker.projection, vectors, method, label="Projecting the token vectors…",
                       estimate=Price(projection_seconds(method, len(vectors))))
    return None if projected is None else projection_map(result, layer, projected)
