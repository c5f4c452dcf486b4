"""Drawing on a page: charts with their downloads, escaped HTML, and the errors a user caused."""
from __future__ import annotations

import re

import streamlit as st

from rcqa.data import DataError
from rcqa.figures import Chart, image_export_available
from rcqa.model import ModelLoadError
from rcqa.qa import InputError


_MARKDOWN = re.compile(r"[\\`*_{}\[\]()<>#!|~$]|:(?=\S)")  # markup, links, and :emoji: / :red[...] directives


def plain(text: str) -> str:
    """Text that st.error / st.warning show as written: a value from a link or a file cannot become a link, an image
    or markup on our page."""
    return _MARKDOWN.sub(lambda found: "\\" + found.group(), str(text))


def report(error: Exception) -> None:
    """An error a user caused, as a message they can act on."""
    kind = {ModelLoadError: "The model could not be loaded", DataError: "The file could not be read",
            InputError: "The model cannot answer this"}.get(type(error), "These settings cannot be used")
    st.error(f"{kind}: {plain(error)}")


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
