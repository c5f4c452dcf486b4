"""A contrast run over a dataset: why the answer and not the foil, layer by layer."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from rcqa.dataset.summary import DatasetSummary
from rcqa.figures.common import Chart, apply_layout
from rcqa.figures.roles import ROLE_COLOURS

SHARE_NAMES = {"other_numbers": "other numbers (neither answer nor foil)"}


def contrast_by_layer(summary: DatasetSummary) -> Chart | None:
    """A contrast run: per layer, the shares of answer, foil, supporting and query words and of the other numbers in
    the contrast's top-k (left axis) and the lens's mean margin log p(answer) − log p(foil) (right axis); None for
    another run."""
    found = summary.contrast
    if not found:
        return None
    layers = summary.layers
    data = pd.DataFrame([{"layer": label, "series": name, "value": values[i]}
                         for name, values in {**found["shares"], "lens margin": found["lens_margin"],
                                              "answer leads on the lens": found["lens_ahead"]}.items()
                         for i, label in enumerate(layers)])
    figure = go.Figure()
    for name in found["shares"]:
        part, shown = data[data.series == name], SHARE_NAMES.get(name, f"{name} words")
        figure.add_scatter(x=part.layer, y=part.value, mode="lines+markers", name=shown,
                           line={"color": ROLE_COLOURS[name]}, hovertemplate=f"%{{x}}: {shown} %{{y:.1f}}%<extra></extra>")
    part = data[data.series == "lens margin"]
    figure.add_scatter(x=part.layer, y=part.value, mode="lines", name="lens margin (right axis)", yaxis="y2",
                       line={"color": "#444", "dash": "dash"}, hovertemplate="%{x}: margin %{y:.2f}<extra></extra>")
    figure.update_layout(yaxis2={"title": "log p(answer) − log p(foil), on the lens", "overlaying": "y",
                                 "side": "right", "zeroline": True})
    apply_layout(figure, f"Why the answer and not the foil ({found['foil']})? {found['n']} questions",
                 "lines: what the top-k words of log p(answer) − log p(foil) are, per layer<br>dashed: the QA head's "
                 "mean margin of the answer over the foil, read from each layer's states", "Layer (output of)",
                 f"Share of the contrast's top-{summary.settings.top_k} words (%)", height=520)
    # the legend under the chart: at the right it would cover the margin's axis
    figure.update_layout(legend={"orientation": "h", "y": -0.22, "x": 0}, margin={"t": figure.layout.margin.t + 20, "b": 150})
    return Chart("dataset-contrast", data, figure)
