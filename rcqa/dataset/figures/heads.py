"""The attention heads over a dataset: each head knocked out, and the pruning curve."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from rcqa.dataset.summary import DatasetSummary
from rcqa.figures.common import Chart, apply_layout


def heads_importance(summary: DatasetSummary) -> Chart | None:
    """The layer × head grid of the mean drop in log p(span) when each head is knocked out, over the run's
    questions; None when the run stored no head scores."""
    found = summary.heads
    if not found:
        return None
    drop = found["scores"]["knockout_drop"]
    data = pd.DataFrame([{"layer": layer, "layer_label": label, "head": head, "mean_drop": drop["mean"][layer][head],
                          "ci_low": drop["low"][layer][head], "ci_high": drop["high"][layer][head],
                          "flip_pct": found["flip_share"][layer][head]}
                         for layer, label in enumerate(found["layers"]) for head in range(found["heads"])])
    figure = go.Figure(go.Heatmap(z=data.pivot(index="layer", columns="head", values="mean_drop").to_numpy(),
                                  x=[f"head {h}" for h in range(found["heads"])], y=found["layers"],
                                  colorscale="RdBu_r", zmid=0,
                                  hovertemplate="%{y}, %{x}: mean drop %{z:.3f}<extra></extra>"))
    apply_layout(figure, f"Each head knocked out, over {found['n']} questions",
                 "mean drop in log p(span) (red: the answer needs the head)", "Head", "Layer (block)",
                 height=max(320, 40 * len(found["layers"]) + 140))
    return Chart("dataset-heads", data, figure)


def pruning_curves(summary: DatasetSummary) -> Chart | None:
    """F1 as heads are removed, least important first by each score, and in a random order (prune-heads); None
    when the run has no pruning curve."""
    found = summary.pruning
    if not found:
        return None
    data = pd.DataFrame([{"order": order, "heads_removed": count, "f1": f1}
                         for order, curve in found["f1"].items() for count, f1 in zip(found["counts"], curve)])
    figure = go.Figure()
    for order, rows in data.groupby("order", sort=False):
        figure.add_scatter(x=rows.heads_removed, y=rows.f1, mode="lines+markers", name=order,
                           line={"dash": "dot" if str(order).startswith("random") else "solid"},
                           hovertemplate=f"{order}: %{{x}} heads removed, F1 %{{y:.1f}}<extra></extra>")
    apply_layout(figure, f"The pruning curve on {found['n']} questions", "F1 as heads are removed, the least "
                 "important first by each score's mean over the run (random: seeded orders)", "Heads removed",
                 "SQuAD F1", height=440)
    return Chart("dataset-pruning", data, figure)
