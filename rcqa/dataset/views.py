"""A dataset summary's own views, registered with rcqa.drawing when they are first drawn (rcqa/__init__ hands the
registry this module's import): what DatasetSummary.show and its Jupyter display draw, with rcqa.dataset.figures."""
from __future__ import annotations

import html

from rcqa import drawing
from rcqa.dataset import figures
from rcqa.dataset.sentence_roles import NEEDS_RUN
from rcqa.dataset.summary import VIEWS, DatasetSummary
from rcqa.figures.common import Chart


def summary_chart(summary: DatasetSummary, view: str = "roles", variant: str = "full") -> Chart:
    """The Chart of one of VIEWS (the JSD map of one variant), the summary named by its preset."""
    named = {summary.name: summary}
    charts = {"roles": lambda: figures.roles_by_depth(named), "quantifier": lambda: figures.quantifier_by_depth(named),
              "jsd": lambda: figures.jsd_map(summary, variant, summary.name),
              "pos": lambda: figures.pos_by_layer(summary), "scores": lambda: figures.scores_by_type(summary),
              "completeness": lambda: figures.completeness_by_layer(named),
              "sentences": lambda: figures.sentences_by_layer(summary)}
    if view not in charts:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")
    if (chart := charts[view]()) is None:  # the sentences of a run whose rows keep none
        raise ValueError(NEEDS_RUN)
    return chart


def summary_html(summary: DatasetSummary) -> str:
    """Jupyter's view of a summary: its one line, then the roles of the top-k words per layer."""
    return f"<div><p>{html.escape(repr(summary))}</p>{summary_chart(summary).plotly._repr_html_()}</div>"


drawing.register(DatasetSummary, lambda summary, *view, **options: summary_chart(summary, *view, **options).figure,
                 summary_html)
