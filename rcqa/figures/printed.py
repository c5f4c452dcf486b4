"""Heatmaps for print: what a PNG or SVG of a word heatmap draws (Chart.export). The page's heatmap shows a page of
words at a time with a slider to scroll; frozen into an image that is a page of the words, a slider and the words
"drag the slider". Printed, every word shows: one row per word (its label reads across), layers as columns, and a
long passage wraps into several columns of words side by side, each as long as the others."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from rcqa.figures.common import apply_layout, blocks

ROW_PX = 15  # a word's row: its label, in LABEL_FONT, reads whole
CELL_PX = 26  # a layer's column
LABEL_FONT = 11
CHARACTER = 0.62  # a character's width, at most, in its font's size (DejaVu Sans, where Chromium draws Plotly's font)
ROWS = 60  # words a column of words holds before the passage wraps into another beside it
WIDEST_PX = 1800  # a printed figure grows this wide at most; past it, its columns of words grow longer
NARROWEST_PX = 1000  # wide enough for the title and its settings line
PANEL_GAP_PX, GROUP_GAP_PX = 12, 24  # between the panels of a column of words, and between columns of words
BAR_PX = 220  # a colour bar's length
LONGEST_LABEL = 24  # characters of a word's label; a longer word is cut, with "…"


@dataclass(frozen=True)
class Panel:
    """One heatmap of each column of words: its name (under its layers), its values (layers × words) and its colours
    (colour_scale's: colorscale, zmin, zmax, zmid and colorbar); scale: whether its colour bar is drawn (two panels
    on one scale draw it once)."""

    name: str
    values: np.ndarray
    colours: dict
    scale: bool = True


def printed_heatmaps(panels: Sequence[Panel], words: list[str], layers: list[str], title: str, subtitle: str,
                     passage_from: int | None = None) -> go.Figure:
    """Every word of `words` (labels already escaped) as a row, each panel's layers as columns beside them; the
    passage wraps into as few columns of words as keep the figure within WIDEST_PX, none longer than the others by
    more than a word. passage_from: the first passage word where question words come first, marked by a line."""
    labels = [word if len(word) <= LONGEST_LABEL else word[:LONGEST_LABEL - 1] + "…" for word in words]
    label_px = LABEL_FONT * CHARACTER * max(map(len, labels), default=1) + 8
    cells = len(panels) * len(layers)
    fixed_px = label_px + (len(panels) - 1) * PANEL_GAP_PX + GROUP_GAP_PX  # a column of words' but its cells
    across = max(1, min(-(-len(words) // ROWS), int(WIDEST_PX // (fixed_px + cells * CELL_PX))))
    groups = blocks(len(words), -(-len(words) // across))
    rows, plot_px = len(groups[0]), max(NARROWEST_PX, len(groups) * (fixed_px + cells * CELL_PX))
    cell_px = (plot_px / len(groups) - fixed_px) / cells  # CELL_PX, or wider where the figure has room to fill
    layer_px = LABEL_FONT * CHARACTER * max(map(len, layers)) + 40  # the layers' labels, upright, and the panel's name
    figure = apply_layout(go.Figure(), title, subtitle, "", "")
    figure.update_layout(width=plot_px + 160, height=rows * ROW_PX + figure.layout.margin.t + layer_px,
                         margin={"l": 10, "r": 150, "b": layer_px})
    for column, group in enumerate(groups):
        for place, panel in enumerate(panels):
            axis = column * len(panels) + place + 1
            suffix = "" if axis == 1 else str(axis)  # Plotly's axes: x, x2, x3 …
            start = column * plot_px / len(groups) + label_px + place * (len(layers) * cell_px + PANEL_GAP_PX)
            _panel(figure, suffix, panel, group, rows, layers, labels,
                   (start / plot_px, (start + len(layers) * cell_px) / plot_px), place == 0, column == 0)
            if passage_from is not None and group.start <= passage_from < group.stop:
                figure.add_shape(type="line", xref=f"x{suffix} domain", yref=f"y{suffix}", x0=0, x1=1,
                                 y0=passage_from - 0.5, y1=passage_from - 0.5, line={"color": "#c0392b", "width": 2})
    _place_scales(figure, rows * ROW_PX)
    return figure


def _panel(figure: go.Figure, suffix: str, panel: Panel, group: range, rows: int, layers: list[str],
           labels: list[str], domain: tuple[float, float], labelled: bool, first: bool) -> None:
    """One panel over one column of words (group: their positions), `rows` high, as the longest column, so that every
    column's rows are as high: its heatmap on axes of its own, the words' labels left of the column's first panel, its
    colour bar once (first: in the first column)."""
    words = list(group)
    figure.add_heatmap(z=panel.values[:, words].T, x=layers, y=words, xaxis=f"x{suffix}", yaxis=f"y{suffix}",
                       showscale=panel.scale and first, hoverongaps=False, **panel.colours)
    figure.update_layout({
        f"xaxis{suffix}": {"domain": domain, "anchor": f"y{suffix}", "type": "category", "tickangle": -90,
                           "tickfont": {"size": LABEL_FONT}, "title": {"text": panel.name}},
        f"yaxis{suffix}": {"anchor": f"x{suffix}", "range": [group.start + rows - 0.5, group.start - 0.5], "tickmode": "array",
                           "tickvals": words, "ticktext": [labels[i] for i in words], "showticklabels": labelled,
                           "tickfont": {"size": LABEL_FONT}, "ticks": "", "showgrid": False, "zeroline": False}})


def _place_scales(figure: go.Figure, plot_px: int) -> None:
    """The drawn colour bars stacked at the top right, each BAR_PX long (or shorter, where the plot is), not
    stretched over a tall figure's height."""
    shown = [trace for trace in figure.data if trace.showscale]
    step = min(BAR_PX + 40, plot_px / max(len(shown), 1))
    for index, trace in enumerate(shown):
        trace.colorbar.update(lenmode="pixels", len=max(step - 40, 40), yanchor="top", y=1 - index * step / plot_px)
