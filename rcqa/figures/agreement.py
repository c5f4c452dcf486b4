"""Two methods' explanations of one question, layer by layer: how far their word rankings agree."""
from __future__ import annotations

from dataclasses import asdict

import pandas as pd
import plotly.graph_objects as go

from rcqa.analysis.agreement import layer_agreement
from rcqa.figures.common import Chart, apply_layout
from rcqa.types import Attribution


def agreement(first: Attribution, second: Attribution, names: tuple[str, str], aggregation: str = "l2",
              k: int = 5) -> Chart:
    """Per layer, Spearman's ρ of the passage words' scores and the share of top-k words in common."""
    data = pd.DataFrame([asdict(row) for row in layer_agreement(first, second, aggregation, k)])
    figure = go.Figure()
    figure.add_scatter(x=data.layer, y=data.spearman, mode="lines+markers", name="rank correlation (Spearman ρ)")
    figure.add_scatter(x=data.layer, y=data.top_k_overlap, mode="lines+markers", name=f"top-{k} words in common")
    figure.update_yaxes(range=[-1.05, 1.05])
    apply_layout(figure, f"How far {names[1]} agrees with {names[0]}, layer by layer",
                 f"Over the passage words of this question's window; token score: {aggregation}", "Layer (output of)",
                 "Agreement", height=360)
    return Chart(f"agreement-{first.example.id}", data, figure)
