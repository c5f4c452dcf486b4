"""At which depth the answer is decided, over a dataset: the answer lens per layer, and the answers that change
when a layer's words are knocked out or its block is skipped."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from rcqa.dataset.layers import DECIDED as DECIDED_SHARE
from rcqa.dataset.summary import DatasetSummary
from rcqa.figures.common import Chart, apply_layout

LENS_COLOURS = {"head": "#1f77b4", "probe": "#ff7f0e"}
KNOCKOUT_COLOURS = {"topk": "#d62728", "random": "#7f7f7f", "bottomk": "#2ca02c", "skip_block": "#9467bd"}


def lens_by_layer(summary: DatasetSummary) -> Chart | None:
    """F1 against gold of the answer each layer's states hold, read by the QA head and by the probes, and how often
    the layer already ranks the model's final answer first; None when the run has no lens."""
    found = summary.lens
    if not found:
        return None
    data = pd.DataFrame([{"reader": reader, "layer": label, "f1": values["f1"][i],
                          "exact_match": values["exact_match"][i], "final_answer_first": values["final_answer_first"][i]}
                         for reader, values in found.items() for i, label in enumerate(summary.layers)])
    figure = go.Figure()
    for reader, values in found.items():
        part = data[data.reader == reader]
        decided = values["decided_at"]
        name = f"{reader}: F1" + ("" if decided is None else f" (decided at {summary.layers[decided]})")
        figure.add_scatter(x=part.layer, y=part.f1, mode="lines+markers", name=name,
                           line={"color": LENS_COLOURS.get(reader)}, hovertemplate="%{x}: F1 %{y:.1f}<extra></extra>")
        figure.add_scatter(x=part.layer, y=part.final_answer_first, mode="lines", name=f"{reader}: final answer first",
                           line={"color": LENS_COLOURS.get(reader), "dash": "dot"},
                           hovertemplate="%{x}: %{y:.0f}% rank the final answer first<extra></extra>")
    apply_layout(figure, "At which depth is the answer decided? The answer lens over the dataset",
                 f"solid: F1 against gold of the span each layer's states answer; dotted: % of examples whose layer "
                 f"already ranks the model's final answer first; decided = first layer at {DECIDED_SHARE:.0%} of the "
                 "last layer's F1", "Layer (output of)", "%")
    return Chart("dataset-lens", data, figure)


def interventions_by_layer(summary: DatasetSummary) -> Chart | None:
    """Per layer, how often the answer flips when its top-k, k random or bottom-k words are knocked out, or the
    block is skipped; None when the run has no interventions."""
    found = summary.interventions
    if not found:
        return None
    data = pd.DataFrame([{"knock_out": kind, "layer": label, "flip_rate_pct": rates[i],
                          "span_probability": found["probability"][kind][i]}
                         for kind, rates in found["flip_rate"].items() for i, label in enumerate(summary.layers)])
    figure = go.Figure()
    for kind, colour in KNOCKOUT_COLOURS.items():
        part = data[data.knock_out == kind]
        figure.add_scatter(x=part.layer, y=part.flip_rate_pct, mode="lines+markers", name=kind.replace("_", " "),
                           line={"color": colour, "dash": "dash" if kind == "random" else "solid"},
                           hovertemplate=f"%{{x}}: {kind} flips %{{y:.0f}}%<extra></extra>")
    apply_layout(figure, f"Does a layer's role hold when we intervene? Knocking out its top-{found['k']} words",
                 f"% of {found['n']} examples whose answer changes when the layer's top-k / k random / bottom-k words' "
                 f"states are replaced by the {found['baseline']} baseline, or the block is skipped",
                 "Layer (output of)", "Answers that change (%)")
    return Chart("dataset-interventions", data, figure)
