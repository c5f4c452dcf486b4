"""Drawing on a page: charts with their downloads (the images made through the job queue), escaped HTML, tables,
and the errors a user caused (rcqa.ui.errors, here for the pages)."""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from rcqa.attribution.cost import Price

if TYPE_CHECKING:
    from streamlit.elements.lib.column_types import ColumnConfig
from rcqa.figures import Chart, image_export_available
from rcqa.figures.common import IMAGE_SECONDS
from rcqa.text import without_bidi_controls
from rcqa.ui.errors import (  # noqa: F401 (the pages' show.callback, show.plain, show.report)
    callback, failure, plain, report, show_callback_failure)
from rcqa.ui import worker
from rcqa.ui.queue import await_ticket, heavy, pending, submit

IMAGE_TYPES = {"png": "image/png", "svg": "image/svg+xml"}
KEPT_IMAGES = 4  # images a session keeps to download (a PNG of a large heatmap is about 1 MB)
_IMAGE_ASKS, _IMAGES = "rcqa.image_asks", "rcqa.images"


NUMBER_FORMAT = "%.3g"  # a table's fractional numbers, unless its page formats a column itself
WIDEST_CELL = 90  # characters a text column is sized for; a longer cell is cut, the rest shown on hover
_CHARACTER_PX, _PADDING_PX = 8, 24


def table(frame: pd.DataFrame, column_config: dict | None = None, wrap: bool = False, **options) -> Any:
    """st.dataframe (with its options; it returns the selection) of a table whose cells may hold a visitor's or a
    file's text, drawn as shown_cells gives them, each column as column_shown sets it out, then as column_config
    says; with wrap, a static table (st.table) whose every cell shows whole, wrapped over lines, for a table of long
    sentences the grid would cut at WIDEST_CELL characters (the model's facts, a run's claims and their evidence).
    Every table a page draws goes through here."""
    shown = shown_cells(frame)
    if wrap:
        return st.table(shown, hide_index=options.get("hide_index"))
    configs: dict[str, Any] = {name: column_shown(shown[name]) for name in shown.columns}
    for name, given in (column_config or {}).items():  # the page's settings win; the width and header stay
        configs[name] = {**configs.get(name, {}), **{key: value for key, value in given.items() if value is not None}}
    return st.dataframe(shown, column_config=configs, **options)


def column_shown(values: pd.Series) -> ColumnConfig:
    """A column's header in words (a snake_case name as words), its width enough for the header and its usual cells
    (the grid would cut both), and fractional numbers to 3 significant digits (the grid would show 17)."""
    header = str(values.name).replace("_", " ")
    numbers = pd.api.types.is_numeric_dtype(values)
    cells = 8 if numbers or values.empty else int(values.head(200).map(lambda cell: len(str(cell))).max())
    width = _CHARACTER_PX * max(len(header), min(cells, WIDEST_CELL)) + _PADDING_PX
    if pd.api.types.is_float_dtype(values):
        return st.column_config.NumberColumn(header, format=NUMBER_FORMAT, width=width)
    return st.column_config.Column(header, width=width)


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


def guarded(page: Callable[[], None]) -> Callable[[], None]:
    """A page's main that never shows a traceback: an error none of its own handlers took is logged and shown as
    failure's one sentence, as is one a widget's callback met before the page ran (see callback). Streamlit's own
    reruns and page switches are BaseExceptions and pass through."""
    @functools.wraps(page)
    def run() -> None:
        show_callback_failure()
        try:
            page()
        except Exception as error:  # the page's last line of defence: a visitor sees one sentence, never a trace
            failure(error, "Drawing this page")
    return run


def html(fragment: str, where: Any = st) -> None:
    """Escaped HTML drawn as markdown, not with st.html: st.html fetches a script of its own (and an HTML
    sanitiser) the first time a page draws one, while markdown's arrives with the page's title. On a new
    visitor's page the answer appears about 0.7 s sooner. The fragment becomes one line of raw HTML, which markdown
    leaves as it is (a blank line would end it), with '$' as an entity, so that no math is read into it. `where`: a
    container or placeholder to draw it in (a st.empty() redrawn later in the run)."""
    where.markdown(markdown_html(fragment), unsafe_allow_html=True)


def tabs(labels: list[str], key: str) -> Sequence[Any]:
    """Tabs that stay on the one chosen across reruns. Streamlit's plain tabs open on their first when the element
    count above them changes between two runs (say the status box of an explanation just made is gone on the next
    click), as they are then a new element: a button inside a tab that ran a job would send the user back to the
    first tab. Keyed, with their state kept in the session, they are the same element wherever they stand."""
    return st.tabs(labels, key=key, on_change="rerun")


def markdown_html(fragment: str) -> str:
    return fragment.replace("\r", "&#13;").replace("\n", "&#10;").replace("$", "&#36;")


def chart(chart: Chart) -> None:
    """A chart with its downloads: data as CSV and JSON, the figure as PNG and SVG (its export figure where it has
    one: a paged heatmap's every word). An image is drawn by kaleido in a headless Chromium, 6-7 s of a core: only on
    a click, through the job queue, then offered to download."""
    exporting = chart.figure is not None and image_export_available()
    if chart.figure is not None:
        # Plotly's own camera button saves what the page shows: for a chart with an export, a page of its words
        dropped = ["toImage"] if exporting and chart.export is not None else []
        st.plotly_chart(chart.figure, key=f"chart-{chart.name}", config={
            "displaylogo": False, "toImageButtonOptions": {"format": "svg", "filename": chart.name},
            "modeBarButtonsToRemove": dropped})
    else:
        st.html(chart.html)
    images = _images(chart) if exporting else {}
    # st.download_button takes the data, or a function that makes it on the click
    downloads: list[tuple[str, bytes | Callable[[], bytes], str, str]] = [
        ("CSV", chart.csv, "csv", "text/csv"), ("JSON", chart.json, "json", "application/json")]
    downloads += [(kind.upper(), image, kind, IMAGE_TYPES[kind]) for kind, image in images.items() if image]
    with st.container(horizontal=True, gap="small"):
        for label, data, extension, mime in downloads:
            st.download_button(f"⬇ {label}", data=data, file_name=f"{chart.name}.{extension}", mime=mime,
                               on_click="ignore", key=f"download-{chart.name}-{extension}", type="tertiary")
        for kind in [kind for kind, image in images.items() if image is None]:
            st.button(f"{kind.upper()}…", key=f"image-{chart.name}-{kind}", type="tertiary",
                      on_click=callback(_ask_image), args=(chart.name, kind),
                      help=f"Draws the chart as {kind.upper()} on the server, through its queue of jobs, then offers it "
                      "to download")


def _ask_image(name: str, kind: str) -> None:
    st.session_state.setdefault(_IMAGE_ASKS, {})[(name, kind)] = None  # the figure it is for: read on the next run


def _images(chart: Chart) -> dict[str, bytes | None]:
    """Each image type of the chart: its bytes once this session asked for it and it was made (through the queue,
    with its place in line and a Cancel button), else None. An ask holds for the figure drawn when it was made: a
    changed figure (another layer, say) is offered again, not drawn again unasked."""
    asks: dict = st.session_state.get(_IMAGE_ASKS, {})
    if not any(name == chart.name for name, _ in asks):
        return dict.fromkeys(IMAGE_TYPES)
    digest = hashlib.sha256(chart.printed.to_json().encode()).hexdigest()  # the figure's, so only for asked charts
    images = {}
    for kind in IMAGE_TYPES:
        ask = (chart.name, kind)
        if ask in asks and asks[ask] in (None, digest):
            asks[ask] = digest
            images[kind] = _image(chart, kind, digest)
            if images[kind] is None:  # refused (a busy queue), failed or cancelled: offered again
                del asks[ask]
        else:
            asks.pop(ask, None)
            images[kind] = None
    return images


def _image(chart: Chart, kind: str, digest: str) -> bytes | None:
    """The chart as `kind`, made through the job queue (identical figures, from any session, are one job) and kept
    with the session's last few; None, with one sentence shown, when the queue is full or drawing fails."""
    kept: dict = st.session_state.setdefault(_IMAGES, {})
    if (key := f"image-{kind}-{digest}") in kept:
        return kept[key]
    slot = f"rcqa.ticket.image.{chart.name}.{kind}"
    # drawn in a worker process (rcqa.ui.queue.heavy), which a Cancel ends: the drawing has no checkpoint
    ticket = pending(slot, key) or submit(slot, key, heavy(None, worker.image, chart.printed.to_json(), kind),
                                          Price(IMAGE_SECONDS))
    if ticket is None:
        return None
    image = await_ticket(ticket, slot, f"Drawing {chart.name}.{kind}…", f"Drawing {chart.name}.{kind} failed",
                         lambda _: f"Drew {chart.name}.{kind}")
    if image is not None:
        while len(kept) >= KEPT_IMAGES:
            kept.pop(next(iter(kept)))
        kept[key] = image
    return image
