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
    """Per layer and token score compared (the chosen one, signed against signed, L2 against L2), Spearman's ρ of the
    passage words' scores and the share of top-k words in common."""
    data = pd.DataFrame([{"score": score, **asdict(row)} for score, rows in found.comparisons().items() for row in rows])
    first, second = map(method_name, found.methods)
    figure = go.Figure()
    for index, (score, part) in enumerate(data.groupby("score", sort=False)):
        words = _SCORE_WORDS.get(score, score)
        for column, name, dash in (("spearman", "rank correlation (Spearman ρ)", "solid"),
                                   ("top_k_overlap", f"top-{found.k} words in common", "dot")):
            figure.add_scatter(x=part.layer, y=part[column], mode="lines+markers", name=f"{name}, {words}",
                               line={"dash": dash, "color": _COLOURS[index % len(_COLOURS)]})
    figure.update_yaxes(range=[-1.05, 1.05])
    apply_layout(figure, f"How far {second} agrees with {first}, layer by layer",
                 f"Over the passage words of this question's window, by each token score: the chosen one "
                 f"({found.aggregation}), signed against signed (sum over hidden dims) and L2 against L2",
                 "Layer (output of)", "Agreement", height=400)
    return Chart(f"agreement-{inputs.result.example.id}", data, figure)


_SCORE_WORDS = {"sum": "signed vs signed", "l2": "L2 vs L2", "abs_sum": "|·| sums", "l2_squared": "squared L2"}
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c")
