"""What every figure shares: the Chart (a figure and the data it draws), labels escaped for Plotly, the layout."""
from __future__ import annotations

import functools
import html
import textwrap
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rcqa.attribution.layerwise import layerwise_method
from rcqa.attribution.targets import TARGETS
from rcqa.text import without_bidi_controls
from rcqa.types import NULL_TARGETS, Aggregation, Answer, Attribution

COMPLETENESS_WARNING = 0.05  # relative error above which a layer's attributions do not add up
# AttnLRP's: the share of the relevance entering at the target above which a layer is judged not to conserve it
# (the rules absorbed that much above it), and above which the ledger leaves too much unaccounted for
CONSERVATION_THRESHOLD = 0.01
AGGREGATION_NAMES = {"l2": "L2 norm over hidden dims (the paper's code)", "sum": "signed sum over hidden dims",
                     "abs_sum": "sum of |values| over hidden dims",
                     "l2_squared": "squared L2 norm over hidden dims (the paper's text)"}
# the token scores that keep the attribution's sign: below 0, a word counts against the target
SIGNED_AGGREGATIONS: frozenset[Aggregation] = frozenset({"sum"})
FONT = "line-height: 1.9;"


# drawing a figure as PNG or SVG through kaleido starts a Chromium each time: 1.7–6.5 s measured on this project's 2
# shared cores (docs/serving.md: Cost of a job)
IMAGE_SECONDS = 5.0


@dataclass(frozen=True)
class Chart:
    """One view of a result: what it draws (data) and how (a Plotly figure, or escaped HTML), and, where the figure
    only works on a page (a heatmap paged with a slider), the figure its PNG and SVG draw instead (export)."""

    name: str  # a file-name stem for downloads
    data: pd.DataFrame
    figure: go.Figure | None = None
    html: str | None = None
    export: go.Figure | None = None

    @property
    def plotly(self) -> go.Figure:
        """The Plotly figure of a chart drawn as one (a chart of escaped HTML has none)."""
        assert self.figure is not None, f"the {self.name} chart is HTML, not a figure"
        return self.figure

    @property
    def printed(self) -> go.Figure:
        """The figure an image of the chart draws: its export figure, else the figure the page shows."""
        return self.plotly if self.export is None else self.export

    def csv(self) -> bytes:
        return self.data.to_csv(index=False).encode()

    def json(self) -> bytes:
        return self.data.to_json(orient="records", indent=1, force_ascii=False).encode()

    def image(self, format: str) -> bytes:
        return figure_image(self.printed, format)


IMAGE_WIDTH = 1200  # px of an image whose figure sets no width of its own
TALLEST_CANVAS = 32_000  # px: Chromium draws no canvas longer than 32,767 on a side, and a PNG is drawn on one


def figure_image(figure: go.Figure, format: str) -> bytes:
    """The figure as PNG or SVG, drawn by kaleido in a local Chromium (see image_export_available), as wide as its
    layout says (IMAGE_WIDTH where it does not); a PNG at twice the resolution where its canvas allows."""
    layout = figure.to_dict().get("layout", {})
    width = layout.get("width") or IMAGE_WIDTH
    longest = max(width, layout.get("height") or 0)
    scale = min(2.0, TALLEST_CANVAS / longest) if format == "png" else 1.0
    return figure.to_image(format=format, width=width, scale=scale)


@functools.cache
def image_export_available() -> bool:
    """Whether figures can be exported server-side: kaleido is installed and finds a local Chromium."""
    try:
        from choreographer.browsers.chromium import Chromium
    except ImportError:
        return False
    return Chromium.find_browser(skip_local=False) is not None


def signed(aggregation: Aggregation) -> bool:
    """Whether a token score keeps the attribution's sign (SIGNED_AGGREGATIONS)."""
    return aggregation in SIGNED_AGGREGATIONS


def colour_scale(aggregation: Aggregation, values: np.ndarray) -> dict:
    """A heatmap's colours for shares under a token score: from 0 to the largest value in one hue for a magnitude;
    for a signed score, diverging around 0 over a range symmetric about it (red: against the target, blue: for it,
    as the magnitude's blue), so that a word that argues against the answer stands out. The colour bar names which."""
    if not signed(aggregation):
        return {"colorscale": "Blues", "zmin": 0, "zmax": largest(values),
                "colorbar": {"title": {"text": "Share of<br>layer (%)"}}}
    extent = largest(np.abs(values))
    return {"colorscale": "RdBu", "zmid": 0, "zmin": -extent, "zmax": extent,
            "colorbar": {"title": {"text": "Signed share<br>of the layer's<br>|attribution| (%)"}}}


def coverage(result: Attribution) -> str:
    """What the result's words cover: the whole passage (every window at once, or its only window), or the one
    window analysed."""
    if result.whole_passage or result.answer.n_windows == 1:
        return "the whole passage"
    return f"window {result.window + 1} of {result.answer.n_windows}"


def blocks(count: int, most: int) -> list[range]:
    """0..count-1 in as few consecutive blocks of at most `most` as there can be, their sizes as equal as they can
    be (they differ by one at most), so that no block is a sliver: 301 in blocks of 60 is one of 51 and five of 50,
    not five of 60 and one of 1."""
    parts = max(1, -(-count // most))
    edges = [-(-part * count // parts) for part in range(parts + 1)]  # the longer blocks first
    return [range(first, last) for first, last in zip(edges, edges[1:])]


def escape_text(text: str, quote: bool = True) -> str:
    """Text for HTML: escaped, so that words like '<b>' show as typed, and without bidirectional controls, so that
    none reorders what is shown."""
    return html.escape(without_bidi_controls(text), quote)


def escape_label(text: str) -> str:
    """Text for a Plotly label or hover (escape_text)."""
    return escape_text(text, quote=False)


def settings_line(result: Attribution, aggregation: Aggregation, target: int) -> str:
    """The target, the settings and, for a target that explains "no answer", what decided between the two."""
    settings, name = result.settings, result.targets[target].name
    decision = (f" · {escape_label(null_decision(result.answer))}"
                if name in NULL_TARGETS and result.answer.no_answer is not None else "")
    method = layerwise_method(settings.method).settings_text(settings)
    return f"Target: {TARGETS.get(name, name)} · {method} · token score: {AGGREGATION_NAMES[aggregation]}{decision}"


def null_decision(answer: Answer) -> str:
    """What decides between an answer and "no answer", with this answer's numbers: the null score against the best
    span's, their difference against the threshold (the one rule the decoder applies)."""
    null = answer.no_answer
    assert null is not None  # asked only of an answer decoded with "no answer" allowed
    if null.best_span_score is None:
        return "No span was valid, so the model abstains whatever the scores."
    odds = answer.null_odds
    above = odds > null.threshold
    return (f"What decides: null score − best span score = {null.score:.2f} − {null.best_span_score:.2f} = "
            f"{odds:+.2f}, {'above' if above else 'not above'} the threshold {null.threshold:+.2f}, so the model "
            f"{'abstains' if above else 'answers'} (it abstains exactly when the difference is above the threshold)")


def word_ticks(figure: go.Figure, labels: list[str], **where) -> None:
    """Word labels, upright, under an x axis of word positions (`where`: a subplot's row and col). The positions are
    the axis's categories, each labelled with its word, so that Plotly labels as many words as the drawn width holds:
    every word on a wide chart, every second or third on a narrow screen, never one over another (hover names every
    word). Every x axis of the figure is one of categories, as axes it shares must be."""
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=list(range(len(labels))))
    figure.update_xaxes(labelalias={str(position): label for position, label in enumerate(labels)}, tickangle=-90,
                        tickfont={"size": 11}, **where)


def axis_words(axis) -> list[str]:
    """The words a word axis (word_ticks; a Plotly axis or its JSON) labels its positions with, in order."""
    return [axis["labelalias"][str(position)] for position in axis["categoryarray"]]


SUBTITLE_WIDTH = 120  # characters on a subtitle's line: Plotly never wraps a title, and cuts it at the chart's edge
TITLE_WIDTH = 78  # characters on a title's or an axis title's line: the narrowest chart, at 800 px, holds about 80
TITLE_LINE = 22  # pixels a title's second line takes
SUBPLOT_TITLES = 40  # pixels the subplot titles take under the subtitle


def wrapped(text: str, width: int = TITLE_WIDTH) -> str:
    """A title in lines of at most `width` characters (Plotly breaks a line only at <br>)."""
    return "<br>".join(line for part in text.split("<br>")
                       for line in textwrap.wrap(part, width, break_long_words=False) or [""])


def apply_layout(figure: go.Figure, title: str, subtitle: str, x: str, y: str, height: int = 420,
                 subplot_titles: bool = False) -> go.Figure:
    """Title, subtitle (wrapped into lines that fit the narrowest chart; the top margin grows with them, and with
    the subplot titles where the figure has them), axis titles and the house template."""
    lines = subtitle_lines(subtitle)
    title = wrapped(title)
    extra = TITLE_LINE * title.count("<br>") + 16 * (len(lines) - 1)
    top = 90 + extra + (SUBPLOT_TITLES if subplot_titles else 0)
    figure.update_layout(title={"text": title, "subtitle": {"text": "<br>".join(lines)}}, xaxis_title=wrapped(x),
                         yaxis_title=y, height=height + extra,
                         margin={"t": top, "l": 90, "r": 30, "b": 90}, template="plotly_white")
    return figure


def subtitle_lines(subtitle: str, width: int = SUBTITLE_WIDTH) -> list[str]:
    """The subtitle in lines of at most `width` characters, broken between its " · " parts where they fit (a part
    stays whole, so a phrase reads on one line), and between words inside a part longer than a line."""
    lines: list[str] = []
    for part in subtitle.split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines += textwrap.wrap(part, width, break_long_words=False) or [""]
    return lines or [""]


def largest(matrix: np.ndarray) -> float:
    """The top of a colour scale that starts at 0: the largest defined value (1 where none is above 0), so that
    small values are told apart rather than all drawn in the scale's first colour."""
    finite = matrix[np.isfinite(matrix)]
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0
