"""Errors on a page: a visitor's text echoed as written (plain), an error the user caused (report), and one the server
met (failure), each as one sentence. Below show and queue, which both tell a visitor what went wrong."""
from __future__ import annotations

import functools
import logging
import re
import traceback
from collections.abc import Callable
from typing import Any

import streamlit as st

from rcqa.attribution.targets import TargetError
from rcqa.data import DataError
from rcqa.model import ModelLoadError
from rcqa.qa import InputError
from rcqa.text import without_bidi_controls
from rcqa.ui.jobs import Cancelled, Stopped
from rcqa.ui.worker import WorkerDied

log = logging.getLogger("rcqa.ui")

_MARKDOWN = re.compile(r"[\\`*_{}\[\]()<>#!|~$]|:(?=\S)")  # markup, links, and :emoji: / :red[...] directives
# GFM links bare URLs, www. names and e-mail addresses in the text that escapes resolve to, so escaping cannot stop
# them: a word joiner (invisible) between ':' and '//', after 'www' and before '@' breaks each pattern
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?i:(?<=www))(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def plain(text: object) -> str:
    """Text that st.error / st.warning show as written: a value from a link or a file cannot become a link, an image
    or markup on our page, nor reorder it (bidirectional controls are dropped)."""
    escaped = _MARKDOWN.sub(lambda found: "\\" + found.group(), without_bidi_controls(str(text)))
    return _AUTOLINK.sub(WORD_JOINER, escaped)


def report(error: Exception) -> None:
    """An error a user caused, as a message they can act on."""
    kinds = ((ModelLoadError, "The model could not be loaded"), (DataError, "The file could not be read"),
             (TargetError, "This explanation cannot be taken"), (InputError, "The model cannot answer this"))
    kind = next((said for kind, said in kinds if isinstance(error, kind)), "These settings cannot be used")
    st.error(f"{kind}: {plain(error)}")


def log_failure(error: Exception, doing: str) -> None:
    # the traceback as text: a record holding the error would keep its frames (and the models in them) alive
    log.error("%s failed:\n%s", doing, "".join(traceback.format_exception(error)).rstrip())


def failure(error: Exception, doing: str) -> None:
    """An error the server met while `doing` something (a worker that died, a full disk, a model that failed in a
    worker): logged with its traceback, shown as one sentence that names no path and holds no traceback."""
    log_failure(error, doing)
    if isinstance(error, Cancelled):
        st.warning(f"{doing} was cancelled: ask again to queue it.")
    elif isinstance(error, Stopped):
        st.warning(f"{doing} was stopped: {error}.")
    elif isinstance(error, WorkerDied):
        st.error(f"{doing} stopped: the process that ran it ended (it is restarted). Try again.")
    elif isinstance(error, OSError):
        st.error(f"{doing} failed: the server could not read or write its files (its disk may be full). Try again "
                 "later; the operator finds the details in the server's log.")
    else:
        st.error(f"{doing} failed on the server. Try again later; the operator finds the details in the server's "
                 "log.")


_CALLBACK_FAILED = "rcqa.callback_failed"


def callback(function: Callable[..., None], doing: str = "Applying that change") -> Callable[..., None]:
    """A widget's on_change / on_click that never shows Streamlit's error page: Streamlit runs callbacks before the
    page's script, outside its guard, so an error here is logged and left for show_callback_failure (which
    show.guarded calls first) to say in one sentence."""
    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            function(*args, **kwargs)
        except Exception as error:  # the callback's last line of defence, as guarded is the page's
            log_failure(error, doing)
            st.session_state[_CALLBACK_FAILED] = doing
    return run


def show_callback_failure() -> None:
    """The sentence a failed callback left, once (show.guarded draws it first on the page)."""
    if (doing := st.session_state.pop(_CALLBACK_FAILED, None)) is not None:
        st.error(f"{doing} failed on the server, so the page shows what was in force before it. Try again; "
                 "the operator finds the details in the server's log.")
