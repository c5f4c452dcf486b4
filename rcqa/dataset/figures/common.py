"""What the dataset's figures share: the line styles of several runs in one chart, the relative-depth axis on
which a 6-block model and BERT-base's 12 blocks line up, a run's long table with its 95 % bands, the published
points beside them, and a number or interval as a label or table cell says it."""
from __future__ import annotations

import math
import re

import pandas as pd
import plotly.graph_objects as go

from rcqa.dataset import published
from rcqa.dataset.summary import DatasetSummary

DASHES = ("solid", "dash", "dot", "dashdot")
DEPTH_AXIS = "Relative depth (0 = embeddings, 1 = last block)"
SOURCE_SYMBOLS = {published.PAPER: "diamond", published.MLRC: "x"}
SOURCE_NAMES = {published.PAPER: "paper (slides)", published.MLRC: "MLRC reproduction"}


def depths(summary: DatasetSummary) -> list[float]:
    return [published.depth(i, len(summary.layers)) for i in range(len(summary.layers))]


def long_table(name: str, summary: DatasetSummary, series: dict[str, list], intervals: dict[str, list]) -> pd.DataFrame:
    return pd.DataFrame([{"run": name, "layer": label, "depth": depth, "series": key, "mean": values[i],
                          "ci_low": intervals[key][i][0], "ci_high": intervals[key][i][1]}
                         for key, values in series.items()
                         for i, (label, depth) in enumerate(zip(summary.layers, depths(summary)))])


def band(figure: go.Figure, part: pd.DataFrame, colour: str, label: str) -> None:
    """A 95 % interval as a filled band under its line."""
    part = part.dropna(subset=["ci_low", "ci_high"])
    if part.empty:
        return
    figure.add_scatter(x=list(part.depth) + list(part.depth[::-1]), y=list(part.ci_high) + list(part.ci_low[::-1]),
                       mode="lines", fill="toself", fillcolor=colour, opacity=0.15, line={"width": 0}, hoverinfo="skip",
                       showlegend=False, name=f"{label} 95 % interval")


def published_points(figure: go.Figure, points: list[published.Published], colours: dict[str, str]) -> pd.DataFrame:
    rows, shown = [], set()
    for point in points:
        name = SOURCE_NAMES[point.source]
        label = f"{point.measure}: {name}"
        figure.add_scatter(x=[point.depth], y=[point.value], mode="markers", name=label, showlegend=label not in shown,
                           marker={"symbol": SOURCE_SYMBOLS[point.source], "size": 11,
                                   "color": colours.get(point.measure, "#444")}, legendgroup=name,
                           hovertemplate=f"{point.measure} {point.value:g}% at depth {point.depth:.2f}<br>"
                                         f"{point.source}<extra></extra>")
        shown.add(label)
        rows.append({"run": name, "depth": point.depth, "series": point.measure, "mean": point.value,
                     "source": point.source})
    return pd.DataFrame(rows)


def top_k(runs: dict[str, DatasetSummary]) -> int:
    return next(iter(runs.values())).settings.top_k


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def number_text(value: float | None, decimals: int = 1) -> str:
    """A number for a label or a table cell; an undefined one (None, NaN) as a dash."""
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.{decimals}f}"


def interval_text(found: dict) -> str:
    """A mean's interval for a table cell; a dash where there is none (fewer than two values)."""
    return "–" if found["low"] is None else f"{found['low']:.3f} – {found['high']:.3f}"
