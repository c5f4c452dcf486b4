"""Drawing on a page: charts with their downloads, escaped HTML, tables, and the errors a user caused."""
from __future__ import annotations

import functools
import logging
import re
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from rcqa.data import DataError
from rcqa.figures import Chart, image_export_available
from rcqa.model import ModelLoadError
from rcqa.qa import InputError
from rcqa.text import without_bidi_controls
from rcqa.ui.jobs import Cancelled
from rcqa.ui.worker import WorkerDied

log = logging.getLogger("rcqa.ui")

_MARKDOWN = re.compile(r"[\\`*_{}\[\]()<>#!|~$]|:(?=\S)")  # markup, links, and :emoji: / :red[...] directives
# GFM links bare URLs, www. names and e-mail addresses in the text that escapes resolve to, so escaping cannot stop
# them: a word joiner (invisible) between ':' and '//', after 'www' and before '@' breaks each pattern
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?i:(?<=www))(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def plain(text: str) -> str:
    """Text that st.error / st.warning show as written: a value from a link or a file cannot become a link, an image
    or markup on our page, nor reorder it (bidirectional controls are dropped)."""
    escaped = _MARKDOWN.sub(lambda found: "\\" + found.group(), without_bidi_controls(str(text)))
    return _AUTOLINK.sub(WORD_JOINER, escaped)


def table(frame: pd.DataFrame, **options) -> Any:
    """st.dataframe (with its options; it returns the selection) of a table whose cells may hold a visitor's or a
    file's text, drawn as shown_cells gives them. Every table a page draws goes through here."""
    return st.dataframe(shown_cells(frame), **options)


def shown_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its text cells (strings, and lists of them) and column names without bidirectional controls.
    The data grid draws a cell as plain text, where no HTML isolate can hold an override, so they are dropped, as
    plain() and the HTML views drop them: a cell reads as the passage above it does, in the order it is stored."""
    shown = frame.rename(columns=lambda name: without_bidi_controls(name) if isinstance(name, str) else name)
    for column in shown.columns[[dtype == object or isinstance(dtype, pd.StringDtype) for dtype in shown.dtypes]]:
        shown[column] = shown[column].map(_shown_cell)
    return shown


def _shown_cell(value: Any) -> Any:
    if isinstance(value, str):
        return without_bidi_controls(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_shown_cell(item) for item in value]
    return value


def report(error: Exception) -> None:
    """An error a user caused, as a message they can act on."""
    kind = {ModelLoadError: "The model could not be loaded", DataError: "The file could not be read",
            InputError: "The model cannot answer this"}.get(type(error), "These settings cannot be used")
    st.error(f"{kind}: {plain(error)}")


def failure(error: Exception, doing: str) -> None:
    """An error the server met while `doing` something (a worker that died, a full disk, a model that failed in a
    worker): logged with its traceback, shown as one sentence that names no path and holds no traceback."""
    # the traceback as text: a record holding the error would keep its frames (and the models in them) alive
    log.error("%s failed:\n%s", doing, "".join(traceback.format_exception(error)).rstrip())
    if isinstance(error, Cancelled):
        st.warning(f"{doing} was cancelled: ask again to queue it.")
    elif isinstance(error, WorkerDied):
        st.error(f"{doing} stopped: the process that ran it ended (it is restarted). Try again.")
    elif isinstance(error, OSError):
        st.error(f"{doing} failed: the server could not read or write its files (its disk may be full). Try again "
                 "later; the operator finds the details in the server's log.")
    else:
        st.error(f"{doing} failed on the server. Try again later; the operator finds the details in the server's "
                 "log.")


def guarded(page: Callable[[], None]) -> Callable[[], None]:
    """A page's main that never shows a traceback: an error none of its own handlers took is logged and shown as
    failure's one sentence. Streamlit's own reruns and page switches are BaseExceptions and pass through."""
    @functools.wraps(page)
    def run() -> None:
        try:
            page()
        except Exception as error:  # the page's last line of defence: a visitor sees one sentence, never a trace
            failure(error, "Drawing this page")
    return run


def html(fragment: str) -> None:
    """Escaped HTML drawn as markdown, not with st.html: st.html fetches a script of its own (and an HTML
    sanitiser) the first time a page draws one, while markdown's arrives with the page's title. On a new
    visitor's page the answer appears about 0.7 s sooner. The fragment becomes one line of raw HTML, which markdown
    leaves as it is (a blank line would end it), with '$' as an entity, so that no math is read into it."""
    st.markdown(markdown_html(fragment), unsafe_allow_html=True)


def markdown_html(fragment: str) -> str:
    return fragment.replace("\r", "&#13;").replace("\n", "&#10;").replace("$", "&#36;")


def chart(chart: Chart) -> None:
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
