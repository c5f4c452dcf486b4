"""Charts kept as their Plotly JSON: built once (where the result was computed, or at a page's first need), then
drawn any number of times without building the figure's objects again (docs/serving.md: Where a new visitor's time
goes)."""
from __future__ import annotations

import dataclasses
import json
from typing import Any

import plotly.graph_objects as go
import plotly.io

from rcqa.figures.common import Chart


class FigureJSON(go.Figure):
    """A Plotly figure held as the JSON that plotly.io.to_json writes for it (as st.plotly_chart sends it), offering
    what is read of a figure once it is drawn: to_dict (st.plotly_chart, and an image export through it), to_json (a
    download, an image job) and pickling (a worker process hands it to the server) as that JSON. Building a figure's
    objects (every property validated, the template copied) costs 50-250 ms a chart on this project's cores, and
    unpickling a go.Figure builds them again; reading the JSON back costs 1-2 ms. Nothing else of go.Figure's is
    offered (its layout, update_layout): a drawn chart is not changed."""

    def __init__(self, spec: str):  # not go.Figure's: building its objects is what this avoids
        object.__setattr__(self, "spec", spec)

    def to_dict(self) -> dict:
        return json.loads(self.spec)

    def to_plotly_json(self) -> dict:
        return self.to_dict()

    def to_json(self, *args: Any, **kwargs: Any) -> str:
        return plotly.io.to_json(self.to_dict(), *args, **kwargs) if args or kwargs else self.spec

    def __reduce__(self):
        return FigureJSON, (self.spec,)


def figure_json(figure: go.Figure) -> str:
    """The figure's JSON as st.plotly_chart writes it (plotly.io.to_json of its dict, unvalidated: it was built
    through the validating objects)."""
    return plotly.io.to_json(figure.to_dict(), validate=False)


def stored(chart: Chart) -> Chart:
    """The chart with its figures (the page's and the export's) held as JSON (FigureJSON); a chart of HTML, or one
    already stored, as it is."""
    if chart.figure is None or isinstance(chart.figure, FigureJSON):
        return chart
    export = None if chart.export is None else FigureJSON(figure_json(chart.export))
    return dataclasses.replace(chart, figure=FigureJSON(figure_json(chart.figure)), export=export)
