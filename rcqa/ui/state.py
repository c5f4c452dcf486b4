"""The one bridge between rcqa and Streamlit: the cached model, cached results, and the view.

The view (model, example, question, settings) lives in st.session_state and is mirrored to st.query_params,
so a link reproduces what its sender saw. Widgets write to the view through callbacks (bind), which keeps
values across page switches, where Streamlit would drop the state of widgets that are not drawn.
Errors a user can cause (bad input, a bad file, a model that will not load, bad settings in a link) are shown
with st.error; the app stays usable.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from rcqa import qa, worker
from rcqa.analysis.projection import METHODS
from rcqa.analysis.similarity import VARIANTS
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.engine import BASELINES, IGSettings
from rcqa.attribution.quadrature import PAPER_STEPS, RULES
from rcqa.attribution.targets import TARGETS
from rcqa.data import DataError, load_examples
from rcqa.faithfulness.compare import Comparison, Protocol
from rcqa.figures import Chart, example_heading, image_export_available, projection
from rcqa.gallery import GALLERY, GALLERY_BY_ID
from rcqa.interventions import KNOCKOUT_BASELINES, Interventions, intervene
from rcqa.jobs import (
    Busy,
    JobQueue,
    Ticket,
    Work,
    default_workers,
    limit_torch_threads,
    torch_threads,
)
from rcqa.lens import AnswerLens, answer_lens
from rcqa.model import DEFAULT_MODEL, ModelLoadError, QAModel, load_model
from rcqa.presets import PRESETS
from rcqa.qa import InputError
from rcqa.types import AGGREGATIONS, Answer, Attribution, Example

MODEL_ENV = "RCQA_MODEL"  # the app's default model: a folder or hub id (else the embedded model)
URL_PASSAGE_LIMIT = 1500  # characters of a pasted passage that still travel in a link
SOURCES = {"gallery": "Gallery", "upload": "Upload a SQuAD / DuoRC file", "paste": "Paste a passage"}
SPANS = {"predicted": "the model's predicted answer (the paper)", "gold": "the gold answer"}
TOLERANCES = (None, 0.001, 0.005, 0.01, 0.05)
MAX_TOP_K = 20
UPLOAD_CHOICES = 1000  # questions of an uploaded file offered at once; a filter narrows them
UPLOAD_WIDGET = "rcqa.upload_file"
_VIEW, _URL_PROBLEMS, _RESULT = "rcqa.view", "rcqa.url_problems", "rcqa.result"
_UPLOAD, _UPLOAD_ERROR = "rcqa.upload", "rcqa.upload_error"
_TICKET = "rcqa.ticket"
_COMPARISON = "rcqa.comparison"
_COMPARISON_TICKET = "rcqa.comparison_ticket"
_KNOCKOUTS = "rcqa.knockouts"  # the interventions this session asked for
KNOCKOUT_DRAWS = 5  # random draws per layer on the Explore page
POLL_SECONDS = 0.5  # how often a waiting page refreshes its place in the queue and the running job's progress


def default_model() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_MODEL


@dataclass
class View:
    """Everything that decides what the pages show; one link holds all of it (except long pasted text)."""

    model: str = field(default_factory=default_model)
    source: str = "gallery"
    example_id: str = GALLERY[0].id  # a gallery id, or an id in the uploaded file
    passage: str = ""  # a pasted passage
    question: str = GALLERY[0].question
    target: str = IGSettings.targets[0]
    span: str = "predicted"
    baseline: str = "pad"
    rule: str = "gausslegendre"
    steps: int = 8
    tolerance: float | None = 0.01
    aggregation: str = "l2"
    top_k: int = 5
    layer: int = 0  # of the top-k passage view
    variant: str = "full"
    first_layer: int = 0  # the pair of layers compared side by side; -1 is the last layer
    second_layer: int = -1
    projection: str = "tsne"
    projection_layer: int = -1
    knockout: str = "pad"  # what replaces knocked-out words' states (rcqa.interventions)

    def settings(self) -> IGSettings:
        """The engine's settings (ValueError if they are invalid)."""
        return IGSettings(targets=(self.target,), span=self.span, baseline=self.baseline, rule=self.rule,
                          steps=self.steps, tolerance=self.tolerance)


# URL parameter → (View field, allowed values or a (type, low, high) range)
_URL_FIELDS: dict[str, tuple[str, Any]] = {
    "target": ("target", tuple(TARGETS)), "span": ("span", tuple(SPANS)), "baseline": ("baseline", tuple(BASELINES)),
    "rule": ("rule", RULES), "steps": ("steps", (int, 1, 128)), "tol": ("tolerance", TOLERANCES),
    "agg": ("aggregation", AGGREGATIONS), "k": ("top_k", (int, 1, MAX_TOP_K)), "layer": ("layer", (int, 0, 100)),
    "jsd": ("variant", tuple(VARIANTS)), "first": ("first_layer", (int, -1, 100)),
    "second": ("second_layer", (int, -1, 100)), "map": ("projection", METHODS),
    "maplayer": ("projection_layer", (int, -1, 100)), "ko": ("knockout", tuple(KNOCKOUT_BASELINES)),
}
RULE_NAMES = {"gausslegendre": "Gauss–Legendre (Captum's default; adaptive)",
              "riemann_right": "right Riemann sum (the paper's text: 50 steps; fixed)",
              "paper_trapezoid": "the paper's released code: 20 points k/20, trapezoid (fixed)"}
PRESET_VIEWS = {name: {"target": p.settings.targets[0], "baseline": p.settings.baseline, "rule": p.settings.rule,
                       "steps": p.settings.steps, "tolerance": p.settings.tolerance, "span": p.settings.span,
                       "aggregation": p.aggregation} for name, p in PRESETS.items()}


def passage_hash(passage: str) -> str:
    return hashlib.sha256(passage.encode()).hexdigest()[:12]


def to_query(view: View) -> dict[str, str]:
    """The view as URL parameters. Long pasted passages go as a hash only (their text stays in the session)."""
    query = {"src": view.source}
    if view.model != default_model():
        query["model"] = view.model
    if view.source == "paste":
        key = "passage" if len(view.passage) <= URL_PASSAGE_LIMIT else "ph"
        query[key] = view.passage if key == "passage" else passage_hash(view.passage)
    else:
        query["ex"] = view.example_id
    gallery = GALLERY_BY_ID.get(view.example_id)
    if view.source != "gallery" or gallery is None or view.question != gallery.question:
        query["q"] = view.question
    for name, (attribute, _) in _URL_FIELDS.items():
        value = getattr(view, attribute)
        query[name] = "off" if value is None else str(value)
    return query


def from_query(query: Mapping[str, str]) -> tuple[View, list[str]]:
    """A view from URL parameters, and what in them could not be used (those fall back to defaults)."""
    view, problems = View(), []
    view.model = query.get("model") or view.model
    if query.get("src") in SOURCES:
        view.source = query["src"]
    if view.source == "paste":
        view.passage = query.get("passage", "")
        if not view.passage and query.get("ph"):
            problems.append("This link's pasted passage was too long to travel in a link; it is kept only in the "
                            "session that pasted it. Paste it again.")
    elif query.get("ex"):
        view.example_id = query["ex"]
        if view.source == "gallery" and view.example_id not in GALLERY_BY_ID:
            problems.append(f"The link names a gallery example {view.example_id!r} that does not exist; "
                            "showing the first one.")
            view.example_id = GALLERY[0].id
        if view.source == "upload":
            problems.append("This link points into an uploaded file, which is kept only in the session that "
                            "uploaded it. Upload the file again to see this question.")
    gallery = GALLERY_BY_ID.get(view.example_id)
    view.question = query.get("q", gallery.question if view.source == "gallery" and gallery else "")
    for name, (attribute, allowed) in _URL_FIELDS.items():
        if name in query:
            try:
                setattr(view, attribute, _parse(query[name], allowed))
            except ValueError as error:
                problems.append(f"Ignored {name}={query[name]!r} from the link: {error}.")
    return view, problems


def _parse(text: str, allowed: Any) -> Any:
    if isinstance(allowed, tuple) and allowed and allowed[0] is int:
        _, low, high = allowed
        if not (text.lstrip("-").isdigit() and low <= int(text) <= high):
            raise ValueError(f"must be a whole number from {low} to {high}")
        return int(text)
    if allowed is TOLERANCES:
        value = None if text == "off" else float(text)
        if value not in TOLERANCES:
            raise ValueError(f"choose one of {', '.join('off' if t is None else str(t) for t in TOLERANCES)}")
        return value
    if text not in allowed:
        raise ValueError(f"choose one of {', '.join(allowed)}")
    return text


def view() -> View:
    """The session's view: read from the URL on the session's first run, then kept in the session."""
    if _VIEW not in st.session_state:
        st.session_state[_VIEW], st.session_state[_URL_PROBLEMS] = from_query(st.query_params.to_dict())
    return st.session_state[_VIEW]


def publish() -> None:
    """Mirror the view to the URL (call once the page has drawn its widgets, so their callbacks have run)."""
    wanted = to_query(view())
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


def show_url_problems() -> None:
    for problem in st.session_state.pop(_URL_PROBLEMS, []):
        st.warning(problem)


def update(**changes: Any) -> None:
    """Change view fields (for callbacks such as 'use the paper's settings')."""
    current = view()
    for name, value in changes.items():
        setattr(current, name, value)


def bind(widget: Callable[..., Any], name: str, label: str, then: Callable[[View], None] | None = None,
         options: list | None = None, **kwargs: Any) -> Any:
    """Draw a widget whose value is the view's field `name`; a change writes it back (then calls `then`)."""
    key = f"rcqa.widget.{name}"
    value = getattr(view(), name)
    if options is not None:
        kwargs["options"] = options
        value = value if value in options else None
    st.session_state[key] = value

    def write_back() -> None:
        setattr(view(), name, st.session_state[key])
        if then:
            then(view())

    return widget(label, key=key, on_change=write_back, **kwargs)


def steps_of_rule(current: View) -> None:
    """After the rule changed: show the 20 points the paper's fixed rule always takes."""
    if current.rule == "paper_trapezoid":
        current.steps = PAPER_STEPS


def fit_layers(count: int) -> None:
    """Make the chosen layers layers of a result with `count` of them: -1 becomes the last, and a layer from a
    link or from a deeper model becomes the last too."""
    current = view()
    for name in ("layer", "first_layer", "second_layer", "projection_layer"):
        chosen = getattr(current, name)
        setattr(current, name, count - 1 if chosen < 0 else min(chosen, count - 1))


def report(error: Exception) -> None:
    """An error a user caused, as a message they can act on."""
    kind = {ModelLoadError: "The model could not be loaded", DataError: "The file could not be read",
            InputError: "The model cannot answer this"}.get(type(error), "These settings cannot be used")
    st.error(f"{kind}: {error}")


# --- the model -------------------------------------------------------------------------------------------

@st.cache_resource(show_spinner="Loading the model…", max_entries=4)
def _load(name: str) -> QAModel:
    qa_model = load_model(name)
    for example in GALLERY:  # a visitor's first page is a gallery answer: have them all ready, even under load
        _answer(qa_model.fingerprint, example.passage, example.question, qa_model)
    return qa_model


def model() -> QAModel | None:
    """The view's model, loaded once per process; None (with an error shown) when it cannot be loaded."""
    job_queue()  # before any forward: it sets how many threads torch may use
    worker_processes()  # started with the app, so that their imports are done before the first explanation
    try:
        return _load(view().model)
    except ModelLoadError as error:
        report(error)
        return None


def switch_model(name: str) -> str | None:
    """Load a model and make it the view's; the example stays. Returns the error message, if any."""
    try:
        _load(name.strip())
    except ModelLoadError as error:
        return str(error)
    update(model=name.strip())
    return None


# --- examples --------------------------------------------------------------------------------------------

def read_upload() -> None:
    """Callback of the file uploader: keep the file's questions in the session and select the first.
    A malformed file leaves an error to show and keeps the previous file's questions."""
    file = st.session_state.get(UPLOAD_WIDGET)
    if file is None:  # cleared: the questions already read stay for this session
        return
    try:
        examples = load_examples(file.getvalue())
        if not examples:
            raise DataError(f"{file.name} holds no questions")
    except DataError as error:
        st.session_state[_UPLOAD_ERROR] = f"{file.name}: {error}"
        return
    st.session_state.pop(_UPLOAD_ERROR, None)
    st.session_state[_UPLOAD] = (file.name, examples)
    update(source="upload", example_id=examples[0].id, question=examples[0].question)


def show_upload_error() -> None:
    if message := st.session_state.get(_UPLOAD_ERROR):
        st.error(f"The file could not be read: {message}")


def matching(examples: list[Example], text: str, limit: int = UPLOAD_CHOICES) -> tuple[list[Example], int]:
    """Up to `limit` examples whose question or title holds every word of text, and how many match in all."""
    words = text.lower().split()
    found = [e for e in examples if all(w in f"{e.title} {e.question}".lower() for w in words)]
    return found[:limit], len(found)


def uploaded() -> tuple[str, list[Example]] | None:
    return st.session_state.get(_UPLOAD)


def offer_questions(name: str, examples: list[Example]) -> None:
    """Offer a file's questions as an uploaded file's (the Dataset page opens a run's example this way)."""
    st.session_state[_UPLOAD] = (name, examples)
    st.session_state.pop(_UPLOAD_ERROR, None)


def keep_result(key: str, result: Attribution) -> None:
    """Show this result for its key without computing it (a dataset run's own explanation)."""
    st.session_state[_RESULT] = (key, result)


def source_example(current: View) -> Example | None:
    """The example the view's source points at, with its own question; None if there is none yet."""
    if current.source == "gallery":
        return GALLERY_BY_ID.get(current.example_id)
    if current.source == "upload":
        file = uploaded()
        return next((e for e in file[1] if e.id == current.example_id), None) if file else None
    if not current.passage.strip():
        return None
    return Example(id=f"pasted-{passage_hash(current.passage)}", passage=current.passage,
                   question=current.question, title="Pasted passage")


def example() -> Example | None:
    """The current example, asking the view's question (a changed question has no gold answer)."""
    current = view()
    found = source_example(current)
    if found is None or found.question == current.question:
        return found
    return replace(found, id=f"{found.id}-asked-{passage_hash(current.question)}", question=current.question,
                   answers=(), is_impossible=False)


def ask_example_question(current: View) -> None:
    """After the source or example changed: ask that example's own question (pasted text keeps the typed one)."""
    found = source_example(current)
    if found is not None and current.source != "paste":
        current.question = found.question


# --- answers and results ---------------------------------------------------------------------------------

@st.cache_data(max_entries=64, show_spinner=False)
def _answer(fingerprint: str, passage: str, question: str, _qa_model: QAModel) -> Answer:
    return qa.answer(_qa_model, passage, question)


def answer(qa_model: QAModel, current: Example) -> Answer | None:
    try:
        return _answer(qa_model.fingerprint, current.passage, current.question, qa_model)
    except InputError as error:
        report(error)
        return None


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


@st.cache_resource
def job_queue() -> JobQueue:
    """The process's one queue of explanations, shared by every session."""
    workers = default_workers()
    limit_torch_threads(workers)
    return JobQueue(workers)


@st.cache_resource
def worker_processes() -> worker.WorkerProcesses | None:
    """The processes the queue's jobs run in (rcqa.worker), or None where $RCQA_JOB_PROCESSES is 0."""
    if not worker.processes_enabled():
        return None
    workers = default_workers()
    return worker.WorkerProcesses(workers, torch_threads(workers), preload=default_model())


def heavy(qa_model: QAModel, function: Callable, *args) -> Work:
    """The job that runs function(qa_model, *args, report): in a worker process, or in the queue's thread."""
    task = worker.Task(function, qa_model.name, qa_model.fingerprint, str(qa_model.device), args)
    processes = worker_processes()
    if processes is None:
        return lambda report: task.run(qa_model, report)
    return lambda report: processes.run(task, report)


def _session() -> tuple[str, Callable[[], bool]]:
    """This session's id, and whether it is still connected (a closed tab's waiting job is then dropped)."""
    session = get_script_run_ctx().session_id
    if not runtime.exists():  # run by a test harness, with no server around it
        return session, lambda: True
    server = runtime.get_instance()
    return session, lambda: server.is_active_session(session)


def pending_request(qa_model: QAModel, current: Example, settings: IGSettings) -> Ticket | None:
    """This session's request for this result, if it made one that is still queued, running or just finished."""
    return _pending(_TICKET, result_key(qa_model, current, settings))


def _pending(slot: str, key: str) -> Ticket | None:
    ticket = st.session_state.get(slot)
    return ticket if ticket and ticket.key == key and ticket.state != "cancelled" else None


def request_result(qa_model: QAModel, current: Example, settings: IGSettings) -> Ticket | None:
    """Queue the explanation (or join an identical one); None, with a message, when the queue is full."""
    session, alive = _session()
    try:
        ticket = job_queue().submit(result_key(qa_model, current, settings), session,
                                    heavy(qa_model, worker.explanation, current, settings, result_cache()), alive)
    except Busy as busy:
        st.warning(f"The server is busy: {busy.waiting} explanations are waiting, the most it queues. "
                   "Try again in a minute.")
        return None
    st.session_state[_TICKET] = ticket
    return ticket


def compute_result(qa_model: QAModel, current: Example, settings: IGSettings) -> Attribution | None:
    """Explain every layer through the queue, resuming this session's request if it made one; None (with a
    message shown) when the queue is full or the explanation fails."""
    ticket = pending_request(qa_model, current, settings) or request_result(qa_model, current, settings)
    return await_result(qa_model, ticket) if ticket else None


def cancel_request(slot: str = _TICKET) -> None:
    if ticket := st.session_state.pop(slot, None):
        ticket.cancel()


def await_result(qa_model: QAModel, ticket: Ticket) -> Attribution | None:
    """Show the request's place in the queue (with a cancel button) and then its progress layer by layer,
    refreshed until it finishes; None (with an error shown) when it fails."""
    total = qa_model.num_layers + 1
    with st.status(f"Attributing {total} layers of {qa_model.name}…", expanded=True) as status:
        place, cancel = st.empty(), st.empty()
        bar = st.progress(0.0, text=f"layer 0/{total} done")
        _wait_for(ticket, place, cancel, "rcqa.cancel", _TICKET, lambda done: bar.progress(
            (done.layer + 1) / total, text=f"layer {done.layer + 1}/{total} done ({done.label}, {done.seconds:.1f} s)"))
        try:
            result, hit = ticket.result()
        except ValueError as error:  # InputError included
            status.update(label="The explanation failed", state="error")
            report(error)
            return None
        finally:
            st.session_state.pop(_TICKET, None)
        origin = "from the result cache" if hit else f"in {result.seconds:.1f} s"
        status.update(label=f"Attributed {total} layers of {qa_model.name} {origin}", state="complete",
                      expanded=False)
    st.session_state[_RESULT] = (ticket.key, result)
    return result


def _wait_for(ticket: Ticket, place, cancel, cancel_key: str, slot: str,
              show_progress: Callable[[Any], None] = lambda progress: None) -> None:
    """Until the ticket's job has finished: its place in the queue with a Cancel button (which withdraws the
    request kept in session slot `slot`), then its progress, each redrawn when it changes."""
    if ticket.state == "waiting":
        cancel.button("Cancel", key=cancel_key, on_click=cancel_request, args=(slot,))
    shown = None
    while not ticket.wait(POLL_SECONDS):
        shown = _show_progress(ticket, place, cancel, show_progress, shown)
    _show_progress(ticket, place, cancel, show_progress, shown)


def _show_progress(ticket: Ticket, place, cancel, show_progress: Callable[[Any], None], shown: tuple | None) -> tuple:
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
    cancel.empty()
    if (done := ticket.progress) is not None:
        show_progress(done)
    return state


def _unchanged(state: tuple, shown: tuple | None) -> bool:
    """The same place in line, or the same layer result (an object holding arrays: compared by identity)."""
    if shown is None or state[0] != shown[0]:
        return False
    return state[1] == shown[1] if state[0] == "waiting" else state[1] is shown[1]


def page_inputs() -> tuple[QAModel, Example, IGSettings] | None:
    """For a page that reads the example chosen on Explore: the model, the example and the settings, with the
    example named at the top; None (with a message and a link to Explore) when one of them is missing."""
    show_url_problems()
    qa_model, current = model(), example()
    if qa_model is None or current is None:
        st.info("Choose a model and an example first.")
        st.page_link("pages/explore.py", label="Choose an example", icon=":material/search:")
        return None
    st.html(example_heading(current, qa_model.name))
    try:
        return qa_model, current, view().settings()
    except ValueError as error:
        report(error)
        return None


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


def comparison_key(qa_model: QAModel, current: Example, settings: IGSettings, protocol: Protocol) -> str:
    return f"methods-{protocol.operator}-{protocol.spare_answer}-{result_key(qa_model, current, settings)}"


def stored_comparison(qa_model: QAModel, current: Example, settings: IGSettings,
                      protocol: Protocol) -> Comparison | None:
    """The methods' comparison on this example, if this session computed it."""
    kept = st.session_state.get(_COMPARISON)
    return kept[1] if kept and kept[0] == comparison_key(qa_model, current, settings, protocol) else None


def pending_comparison(qa_model: QAModel, current: Example, settings: IGSettings, protocol: Protocol) -> bool:
    """Whether this session asked for this comparison and it is still queued, running or just finished."""
    return _pending(_COMPARISON_TICKET, comparison_key(qa_model, current, settings, protocol)) is not None


def compute_comparison(qa_model: QAModel, current: Example, settings: IGSettings,
                       protocol: Protocol) -> Comparison | None:
    """Compare the attribution methods through the explanation queue (it is as heavy as an explanation), showing
    the request's place in line with a Cancel button, or resuming this session's request; None, with a message
    shown, when the queue is full, the request was cancelled or the comparison fails."""
    key = comparison_key(qa_model, current, settings, protocol)
    ticket = _pending(_COMPARISON_TICKET, key)
    if ticket is None:
        session, alive = _session()
        try:
            ticket = job_queue().submit(key, session, heavy(qa_model, worker.comparison, current, settings, protocol), alive)
        except Busy as busy:
            st.warning(f"The server is busy: {busy.waiting} jobs are waiting, the most it queues. "
                       "Try again in a minute.")
            return None
        st.session_state[_COMPARISON_TICKET] = ticket
    with st.status("Scoring the words with every method, then re-answering with each method's top words deleted…",
                   expanded=True) as status:
        _wait_for(ticket, st.empty(), st.empty(), "rcqa.cancel_comparison", _COMPARISON_TICKET)
        try:
            comparison = ticket.result()
        except ValueError as error:  # InputError included
            status.update(label="The comparison failed", state="error")
            report(error)
            return None
        finally:
            st.session_state.pop(_COMPARISON_TICKET, None)
        status.update(label="Compared the methods", state="complete", expanded=False)
    st.session_state[_COMPARISON] = (key, comparison)
    return comparison


@st.cache_data(max_entries=32, show_spinner="Projecting the token vectors…")
def projection_chart(key: str, layer: int, method: str, _result: Attribution) -> Chart:
    """t-SNE is slow on long inputs: keep each layer's map per result (key) and method."""
    return projection(_result, layer, method)


# --- showing charts --------------------------------------------------------------------------------------

def show_html(fragment: str) -> None:
    """Escaped HTML drawn as markdown, not with st.html: st.html fetches a script of its own (and an HTML
    sanitiser) the first time a page draws one, while markdown's arrives with the page's title. On a new
    visitor's page the answer appears about 0.7 s sooner. The fragment becomes one line of raw HTML, which markdown
    leaves as it is (a blank line would end it), with '$' as an entity, so that no math is read into it."""
    st.markdown(markdown_html(fragment), unsafe_allow_html=True)


def markdown_html(fragment: str) -> str:
    return fragment.replace("\r", "&#13;").replace("\n", "&#10;").replace("$", "&#36;")


def show(chart: Chart) -> None:
    """A chart with its downloads: data as CSV and JSON, the figure as PNG and SVG."""
    if chart.figure is not None:
        st.plotly_chart(chart.figure, key=f"chart-{chart.name}", config={
            "displaylogo": False, "toImageButtonOptions": {"format": "svg", "filename": chart.name}})
    else:
        st.html(chart.html)
    formats = [("CSV", chart.csv, "csv", "text/csv"), ("JSON", chart.json, "json", "application/json")]
    if chart.figure is not None and image_export_available():
        formats += [("PNG", lambda: chart.image("png"), "png", "image/png"),
                    ("SVG", lambda: chart.image("svg"), "svg", "image/svg+xml")]
    with st.container(horizontal=True, gap="small"):
        for label, data, extension, mime in formats:
            st.download_button(f"⬇ {label}", data=data, file_name=f"{chart.name}.{extension}", mime=mime,
                               on_click="ignore", key=f"download-{chart.name}-{extension}", type="tertiary")
