"""The example a page works on: from the gallery, an uploaded SQuAD / DuoRC file (kept in the session) or a
pasted passage, asking the view's question."""
from __future__ import annotations

from dataclasses import replace

import streamlit as st
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.uploaded_file_manager import UploadedFile

from rcqa.data import DataError
from rcqa.dataset.aggregate import run_examples
from rcqa.dataset.store import run_folders
from rcqa.gallery import GALLERY_BY_ID
from rcqa.qa import MAX_PASSAGE_CHARS, MAX_QUESTION_CHARS
from rcqa.text import quoted
from rcqa.types import Example
from rcqa.ui.run_cache import from_run
from rcqa.ui.show import plain
from rcqa.ui.view import View, example_changed, passage_hash, update, view
from rcqa.uploads import read_examples


def box_limit(what: str, limit: int) -> str:
    """The sentence beside a text box of at most `limit` characters: Streamlit ignores a paste past it whole, and
    keeps what the box held, so the limit is said before it bites."""
    return (f"The {what} box holds at most {limit:,} characters: a longer paste is ignored, and the {what} stays as "
            "it was.")


QUESTION_LIMIT = box_limit("question", MAX_QUESTION_CHARS)
PASSAGE_LIMIT = box_limit("passage", MAX_PASSAGE_CHARS)
UPLOAD_CHOICES = 1000  # questions of an uploaded file offered at once; a filter narrows them
# a search of an uploaded file's questions, read in the page thread: 5 words over 200,000 questions take 0.11 s
SEARCH_CHARS, SEARCH_WORDS = 200, 5
UPLOAD_WIDGET = "rcqa.upload_file"
_UPLOAD, _UPLOAD_ERROR, _SEARCH = "rcqa.upload", "rcqa.upload_error", "rcqa.upload_search"


def read_upload() -> None:
    """Callback of the file uploader: keep the file's questions in the session and select the first.
    A malformed file leaves an error to show and keeps the previous file's questions. The file is read in a
    process of its own, with a time limit (rcqa.uploads), and its bytes are let go once read."""
    file = st.session_state.get(UPLOAD_WIDGET)
    if not isinstance(file, UploadedFile):  # cleared (None), or read and let go (a DeletedFile, which is "changed"
        return                              # once): the questions read stay for this session
    try:
        examples = read_examples(file.getvalue())
        if not examples:
            raise DataError(f"{file.name} holds no questions")
    except DataError as error:
        st.session_state[_UPLOAD_ERROR] = f"{quoted(file.name)}: {error}"  # the browser's name, of any length
        return
    finally:
        _let_go(file)
    st.session_state.pop(_UPLOAD_ERROR, None)
    st.session_state[_UPLOAD] = (file.name, examples)
    update(source="upload", example_id=examples[0].id, question=examples[0].question, run="")
    example_changed(view())


def _let_go(file) -> None:
    """Drop the file's bytes from Streamlit's upload store, which keeps them for the session's life otherwise (as
    st.chat_input does with its files once read); the uploader then reads as empty, and shows the file's name."""
    context = get_script_run_ctx()
    if context is not None and isinstance(context.uploaded_file_mgr, MemoryUploadedFileManager):
        context.uploaded_file_mgr.remove_file(session_id=context.session_id, file_id=file.file_id)


def show_upload_error() -> None:
    if message := st.session_state.get(_UPLOAD_ERROR):
        st.error(f"The file could not be read: {plain(message)}")


def matching(examples: list[Example], text: str, limit: int = UPLOAD_CHOICES) -> tuple[list[Example], int]:
    """Up to `limit` examples whose question or title holds every word of text (case aside), and how many match in
    all. A search past SEARCH_CHARS characters or SEARCH_WORDS words is refused (ValueError, one sentence) before
    any question is read. Each word reads only the examples the words before it left, and each of their distinct
    titles once: an article's title is shared by all its questions, and may be long."""
    if len(text) > SEARCH_CHARS:
        raise ValueError(f"the search has {len(text):,} characters; the limit is {SEARCH_CHARS}. Search for a few "
                         "words of the question or its title")
    words = text.lower().split()
    if len(words) > SEARCH_WORDS:
        raise ValueError(f"the search has {len(words):,} words; the limit is {SEARCH_WORDS}. Search for a few words "
                         "of the question or its title")
    found = examples
    for word in words:
        titles = {title for title in {e.title for e in found} if word in title.lower()}
        found = [e for e in found if e.title in titles or word in e.question.lower()]
    return found[:limit], len(found)


def search(examples: list[Example], text: str) -> tuple[list[Example], int]:
    """matching, kept in the session for these examples and this text: a rerun for any other widget of the page
    does not read the questions again. ValueError for a search past the limits."""
    kept = st.session_state.get(_SEARCH)
    if kept is None or kept[0] is not examples or kept[1] != text:
        kept = st.session_state[_SEARCH] = (examples, text, matching(examples, text))
    return kept[2]


def uploaded() -> tuple[str, list[Example]] | None:
    """The questions offered as a file's: a dataset run's when the view names one, else the file uploaded."""
    current = view()
    return run_questions(current.run) if current.run else st.session_state.get(_UPLOAD)


def run_questions(name: str) -> tuple[str, list[Example]] | None:
    """The questions a dataset run's rows carry, by the run folder's name under $RCQA_RUNS (a link names it, so a
    reload finds them again); None for a run this server does not have, or one whose rows do not carry them."""
    folder = next((found for found in run_folders() if found.name == name), None)
    if folder is None:
        return None
    questions = from_run(folder, "questions", lambda: run_examples(str(folder)), "Reading the run's questions…")
    return (f"run {name}", questions) if questions else None


def offer_questions(name: str, examples: list[Example]) -> None:
    """Offer a file's questions as an uploaded file's (the Dataset page opens a run's example this way)."""
    st.session_state[_UPLOAD] = (name, examples)
    st.session_state.pop(_UPLOAD_ERROR, None)


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
    """After the source or example changed: ask that example's own question (pasted text keeps the typed one), with
    the settings that belong to an example back at their defaults."""
    example_changed(current)
    found = source_example(current)
    if found is not None and current.source != "paste":
        current.question = found.question
