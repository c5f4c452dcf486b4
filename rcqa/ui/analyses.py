"""The registered analyses a page computes on request (rcqa.analysis.registered.OPTIONAL), each through the queue
and drawn by the figure rcqa.figures registered for it: a page shows every one of them without naming any."""
from __future__ import annotations

import streamlit as st

from rcqa.analysis.registered import ANALYSES, OPTIONAL
from rcqa.analysis.registry import Inputs, figure_of
from rcqa.analysis_run import companion_settings
from rcqa.attribution.cost import Price
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures import Chart
from rcqa.model import QAModel
from rcqa.types import Aggregation, Attribution, Example
from rcqa.ui import show, worker
from rcqa.ui.results.explanations import result_cache, result_key
from rcqa.ui.results.prices import explanation_change, explanation_price_of, within_budget
from rcqa.ui.results.requested import ask_button, queued

ANALYSIS_SECONDS = 1.0  # an analysis of one method reads the arrays of the explanation it is given: well under this


def optional_charts(qa_model: QAModel, current: Example, settings: ExplainSettings, result: Attribution,
                    aggregation: Aggregation, k: int) -> None:
    """Each optional analysis under its heading: its button until asked for, then its figure."""
    for name in OPTIONAL:
        st.subheader(ANALYSES[name].title)
        if chart := optional_chart(qa_model, current, settings, result, name, aggregation, k):
            show.chart(chart)


def analysis_price(qa_model: QAModel, current: Example, settings: ExplainSettings, name: str) -> Price | None:
    """What the analysis costs: its companion explanation's price (rcqa.analysis_run.companion_settings), or, for an
    analysis of one method, ANALYSIS_SECONDS; None, with the reason shown, where that explanation is over the
    server's budget (with what to change) or the model cannot read the example."""
    if (companion := companion_settings(name, settings)) is None:
        return Price(ANALYSIS_SECONDS)
    if (price := explanation_price_of(qa_model, current, companion)) is None:
        return None
    return price if within_budget("analysis", price, explanation_change(companion)) else None


def optional_chart(qa_model: QAModel, current: Example, settings: ExplainSettings, result: Attribution, name: str,
                   aggregation: Aggregation, k: int) -> Chart | None:
    """The analysis' figure once asked for and computed; None (with its button, or why not) before."""
    chosen = ANALYSES[name]
    if chosen.companion_of(settings.method) is not None and settings.windows == "all":
        st.caption(f"This compares two methods in the answer's window only: choose that window on Explore to see "
                   f"{chosen.title.lower()}.")
        return None
    if (price := analysis_price(qa_model, current, settings, name)) is None:
        return None
    request = (f"analysis.{name}", result_key(qa_model, current, settings), aggregation, k)
    if not ask_button(request, f"Compute: {chosen.title}",
                      f"{chosen.summary[0].upper()}{chosen.summary[1:]}: {price.in_words()} on this server."):
        return None
    found = queued(request, qa_model, worker.analysis, name, result, settings, aggregation, k, result_cache(),
                   label=f"{chosen.title}…", estimate=price, shown=result.example)
    if found is None:
        return None
    return figure_of(name)(found, Inputs(result, aggregation, k, method=settings.method))
