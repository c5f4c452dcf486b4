"""What every page starts from: the view's model, loaded once per process (load_model's cache is the process's
one), and the model, example and settings a page reads from Explore."""
from __future__ import annotations

import streamlit as st

from rcqa.attribution.settings import ExplainSettings
from rcqa.catalog import shown_name
from rcqa.figures import example_heading
from rcqa.gallery import GALLERY
from rcqa.model import ModelLoadError, QAModel, load_model
from rcqa.qa import text_digest, unread_warning
from rcqa.types import Example
from rcqa.ui import PAGES
from rcqa.ui.examples import example
from rcqa.ui.queue import job_queue, worker_processes
from rcqa.ui.results.answers import answer, answer_ahead
from rcqa.ui.show import report
from rcqa.ui.view import fit_target, fit_windows, show_url_problems, update, view


def _load(name: str) -> QAModel:
    """The model from load_model's cache, the process's one (bounded by its weights' memory: rcqa.model.loaded.MODELS_MB); the spinner shows
    only when loading takes a while."""
    with st.spinner("Loading the model…"):
        qa_model = load_model(name)
        _answer_gallery(qa_model.fingerprint, qa_model)
    return qa_model


@st.cache_resource(max_entries=16, show_spinner=False)
def _answer_gallery(fingerprint: str, _qa_model: QAModel) -> None:
    """A visitor's first page is a gallery answer: have them all ready, even under load (once per model; the
    cache keeps nothing but the fingerprint)."""
    answer_ahead(_qa_model, GALLERY)


def model() -> QAModel | None:
    """The view's model, loaded once per process; None (with an error shown) when it cannot be loaded."""
    job_queue()  # before any forward: it sets how many threads torch may use
    worker_processes()  # started with the app, so that their imports are done before the first explanation
    try:
        return _load(view().model)
    except ModelLoadError as error:
        report(error)
        return None


def named_model(name: str) -> QAModel | None:
    """A model of the catalog by name (a second one, for the side-by-side view), loaded once per process; None (with
    an error shown) when it cannot be loaded."""
    try:
        return _load(name)
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


def page_inputs() -> tuple[QAModel, Example, ExplainSettings] | None:
    """For a page that reads the example chosen on Explore: the model, the example and the settings, with the
    example named at the top; None (with a message and a link to Explore) when one of them is missing."""
    show_url_problems()
    qa_model, current = model(), example()
    if qa_model is None or current is None:
        st.info("Choose a model and an example first.")
        st.page_link(PAGES / "explore.py", label="Choose an example", icon=":material/search:")
        return None
    st.html(example_heading(current, shown_name(qa_model.name)))
    if (found := answer(qa_model, current)) is not None:  # what Explore explains for it, opened from a link too
        fit_target(found)
        fit_windows(found)
    try:
        return qa_model, current, view().settings()
    except ValueError as error:
        report(error)
        return None


def unread_note(qa_model: QAModel, current: Example) -> str | None:
    """One sentence, for under the answer, where most of the question's or the passage's tokens are unknown to the
    model's tokenizer (rcqa.qa.unread_warning); None where it can read both."""
    return _unread_note(qa_model.fingerprint, text_digest(current.passage, current.question), qa_model, current)


@st.cache_data(max_entries=256, show_spinner=False)
def _unread_note(fingerprint: str, digest: str, _qa_model: QAModel, _current: Example) -> str | None:
    """Kept by model and text: a 100,000-character passage takes 0.2 s to tokenise, and every rerun asks."""
    return unread_warning(_qa_model.tokenizer, _current.passage, _current.question)
