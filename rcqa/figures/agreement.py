"""Two methods' explanations of one question, layer by layer: how far their word rankings agree (the agreement
analysis' figure)."""
from __future__ import annotations

from dataclasses import asdict

import pandas as pd
import plotly.graph_objects as go

from rcqa.analysis.agreement import MethodAgreement
from rcqa.analysis.registry import Inputs, register_figure
from rcqa.figures.common import Chart, apply_layout
from rcqa.figures.methods import method_name


@register_figure("agreement")
def agreement(found: MethodAgreement, inputs: Inputs) -> Chart:
    """Per layer, Spearman's ρ of the passage words' scores and the share of top-k words in common."""
    data = pd.DataFrame([asdict(row) for row in found.layers])
    first, second = map(method_name, found.methods)
    figure = go.Figure()
    figure.add_scatter(x=data.layer, y=data.spearman, mode="lines+markers", name="rank correlation (Spearman ρ)")
    figure.add_scatter(x=data.layer, y=data.top_k_overlap, mode="lines+markers", name=f"top-{found.k} words in common")
    figure.update_yaxes(range=[-1.05, 1.05])
    apply_layout(figure, f"How far {second} agrees with {first}, layer by layer",
                 f"Over the passage words of this question's window; token score: {found.aggregation}",
                 "Layer (output of)", "Agreement", height=360)
    return Chart(f"agreement-{inputs.result.example.id}", data, figure)
