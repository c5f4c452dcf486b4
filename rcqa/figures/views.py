"""A result's own views (Attribution.show and its Jupyter display), drawn by the builders beside this module."""
from __future__ import annotations

from rcqa.figures.answer import answer_summary
from rcqa.figures.common import Chart
from rcqa.figures.layers import jsd
from rcqa.figures.roles import roles
from rcqa.figures.words import heatmap, topk_passage, topk_words
from rcqa.types import VIEWS, Attribution


def view_chart(result: Attribution, view: str, k: int = 5, aggregation: str = "l2", target: int = 0) -> Chart:
    """The Chart of one of VIEWS."""
    if view == "heatmap":
        return heatmap(result, aggregation, target)
    if view == "top-k":
        return topk_words(result, k, aggregation, target)
    if view == "roles":
        return roles(result, k, aggregation, target)
    if view == "jsd":
        return jsd(result, "full", k, aggregation, target)
    raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")


def notebook_html(result: Attribution, k: int = 5) -> str:
    """The answer, the heatmap (as Plotly shows it in a notebook) and the last layer's top-k passage words."""
    figure = heatmap(result).figure
    return (f"<div>{answer_summary(result.example, result.answer)}{figure._repr_html_()}"
            f"{topk_passage(result, len(result.layers) - 1, k).html}</div>")
