"""The model's answer to the current example, with the logits it was decoded from: in the page thread for a passage
of a window or two (kept per model and text), else through the queue; and the tokens of a window of it."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from rcqa import qa
from rcqa.model import QAModel
from rcqa.qa import InputError
from rcqa.types import Answer, Example
from rcqa.ui import worker
from rcqa.ui.capacity import reading_price
from rcqa.ui.results.requested import queued
from rcqa.ui.show import report


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


def window_tokens(qa_model: QAModel, current: Example, found: Answer) -> int:
    """The tokens of a window of the example: counted where it is the passage's only one (a longer passage's windows
    are full)."""
    if found.n_windows == 1:
        return _window_lengths(qa_model.fingerprint, current.passage, current.question, qa_model)[0]
    return qa_model.max_len
