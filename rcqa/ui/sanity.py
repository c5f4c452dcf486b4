"""The Methods page's sanity check (rcqa.faithfulness.sanity): which methods to check, its price on this server, its
button, the job through the queue, then its chart and verdicts."""
from __future__ import annotations

import streamlit as st

from rcqa.attribution.methods import COMPARED, METHODS, OFFERED
from rcqa.attribution.settings import ExplainSettings
from rcqa.faithfulness.sanity import model_parts, sanity_price
from rcqa.figures.sanity import TITLE, sanity_curves, sanity_verdicts
from rcqa.model import QAModel
from rcqa.types import Example
from rcqa.ui import show, worker
from rcqa.ui.results.answers import answer, window_tokens
from rcqa.ui.results.explanations import result_key
from rcqa.ui.results.prices import within_budget
from rcqa.ui.results.requested import ask_button, queued


def sanity_section(qa_model: QAModel, current: Example, settings: ExplainSettings) -> None:
    """The section: the methods to check and what they cost, the button, then the cascade's chart, each part alone
    in an expander, and every method's verdict."""
    st.subheader(TITLE)
    st.caption("Adebayo et al.'s sanity check: the QA head, then each block from the top, then the embeddings are "
               "re-initialised, and every method explains the same span again. An explanation that hardly changes "
               "when the model is destroyed does not show what the model learnt.")
    methods = st.multiselect("Methods checked (random is always among them)", OFFERED, default=list(COMPARED),
                             key="rcqa.sanity_methods", format_func=lambda name: METHODS[name].label)
    if (found := answer(qa_model, current)) is None:
        return
    price = sanity_price(qa_model, settings, methods, window_tokens(qa_model, current, found))
    if not within_budget("check", price, "leave Integrated Gradients out"):
        return
    request = ("sanity", result_key(qa_model, current, settings), tuple(methods))
    if not ask_button(request, "Run the sanity check",
                      f"Explains the answer again on {2 * len(model_parts(qa_model))} randomised copies of the model "
                      f"with every method chosen: {price.in_words()} on this server (Integrated Gradients costs "
                      "the most)."):
        return
    checked = queued(request, qa_model, worker.sanity, current, settings, tuple(methods),
                     label="Randomising the model's weights and explaining again…", estimate=price,
                     first_step="scoring the trained model", shown=current)
    if checked is None:
        return
    show.chart(sanity_curves(checked, "cascade"))
    with st.expander("Each part randomised alone"):
        show.chart(sanity_curves(checked, "independent"))
    for name, sentence in sanity_verdicts(checked):
        st.markdown(f"**{show.plain(name)}**: {show.plain(sentence)}")
