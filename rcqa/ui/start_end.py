"""Start and end apart on Explore (rcqa.ui.ends says when): their two heatmaps on one word axis, a sentence read
from them, and each one's completeness."""
from __future__ import annotations

import streamlit as st

from rcqa.figures import Chart, whole_input
from rcqa.types import Attribution
from rcqa.ui.show import chart, plain

TARGET_NAMES = {"start_logit": "Start logit", "end_logit": "End logit"}
CHECKS = {"completeness": "|Σ attributions − (F(input) − F(baseline))| / |F(input) − F(baseline)|",
          "conservation": "|Σ relevance − entering| / |entering|, entering the relevance the target hands AttnLRP's "
                          "rules (they absorb part of it by design)"}


def show_apart(result: Attribution, apart: Chart | None, reading: str | None) -> None:
    """The start and end logits' heatmaps (`apart`, rcqa.figures.whole_input.start_end without their sum), the
    sentence read from them and their completeness, where the result holds both; else where to ask for them."""
    if apart is None:
        st.caption("Start and end apart: choose “apart” under “Start and end” above to explain the start and the end "
                   "logit too, in the same job (in Python: rcqa.explain(..., targets=('start_logit', 'end_logit'))).")
        return
    chart(apart)
    assert reading is not None  # read from the chart, with it (rcqa.ui.drawn.heatmap_tab)
    st.markdown(plain(reading))
    errors = whole_input.start_end_completeness(result)
    assert errors is not None  # the result holds both targets: start_end drew them
    check = result.completeness[0].kind  # IG's completeness, or AttnLRP's conservation (not complete by design)
    for column, (name, error) in zip(st.columns(len(errors)), errors.items()):
        column.metric(f"{TARGET_NAMES[name]}: {check} error (worst layer)", f"{error:.2%}",
                      help=CHECKS[check] + " at the layer where it is largest; each target is checked on its own "
                                           "(Completeness tab: every layer).")
