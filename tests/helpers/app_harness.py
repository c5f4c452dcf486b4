"""Shared by the dashboard tests: an AppTest of app.py on a tiny local model, and readers for what it drew."""
from __future__ import annotations

import base64
import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "rcqa" / "ui" / "dashboard" / "app.py"  # page paths are relative to it
TIMEOUT = 120


def open_app(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
    """The app after its first run (on `page` if given), optionally opened from a link's parameters."""
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.query_params.update(query or {})
    app.run()
    if page:
        app.switch_page(page).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def recorded_prices(monkeypatch) -> dict[str, tuple[float, float | None]]:
    """Record every job submitted to the queue from now on: its key → (expected seconds, worst), as the page
    priced it."""
    from rcqa.ui.jobs import JobQueue

    prices: dict[str, tuple[float, float | None]] = {}
    submit = JobQueue.submit

    def recorded(queue, key, *args, **kwargs):
        prices[key] = (kwargs["estimate"], kwargs.get("worst"))
        return submit(queue, key, *args, **kwargs)

    monkeypatch.setattr(JobQueue, "submit", recorded)
    return prices


def plotly_specs(app: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def values(data) -> np.ndarray:
    """An array of a Plotly spec, which Plotly sends as a list or as base64 'bdata' with dtype and shape."""
    if isinstance(data, dict) and "bdata" in data:
        flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
        return flat.reshape([int(n) for n in str(data.get("shape", len(flat))).split(",")])
    return np.asarray(data)


def unwrapped(title: str) -> str:
    """A title as one line: long titles are drawn on several (rcqa.figures.common.wrapped)."""
    return title.replace("<br>", " ")


def spec_titled(app: AppTest, start: str) -> dict:
    """The one Plotly figure whose title begins with `start`."""
    found = [s for s in plotly_specs(app) if unwrapped(s["layout"]["title"]["text"]).startswith(start)]
    assert len(found) == 1, [s["layout"]["title"]["text"] for s in plotly_specs(app)]
    return found[0]


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []
        self.in_rank = False

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.in_rank = tag == "sup"

    def handle_endtag(self, tag):
        self.in_rank = self.in_rank and tag != "sup"

    def handle_data(self, data):
        if not self.in_rank:
            self.text.append(data)


def read_html(markup: str) -> tuple[set[str], str]:
    """(the tags a browser would build, the text it would show without the top-k rank numbers) of HTML."""
    reader = _Reader()
    reader.feed(markup)
    reader.close()
    return reader.tags, "".join(reader.text)


def html_of(app: AppTest) -> str:
    """The page's HTML: st.html's, and the escaped HTML drawn as markdown (rcqa.ui.show.html)."""
    return texts(app.get("html")) + texts(app.markdown)


def explain(app: AppTest) -> AppTest:
    """Press 'Explain every layer' unless the result is already shown (from the result cache)."""
    if "rcqa.explain" in [button.key for button in app.button]:
        app.button(key="rcqa.explain").click().run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def press(app: AppTest, key: str) -> AppTest:
    """Click the button with this key, and check that the rerun raised nothing."""
    app.button(key=key).click().run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def open_tab(app: AppTest, label: str, key: str = "rcqa.explore_tabs") -> AppTest:
    """Open the tab of this label, as a click on it does (the page then builds that tab alone), and rerun."""
    assert label in [tab.label for tab in app.tabs], [tab.label for tab in app.tabs]
    app.session_state[key] = label
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app
