"""Which explanation to trust: the attribution methods side by side on the current example, and their deletion
tests against random deletion."""
import dataclasses

import streamlit as st

from rcqa.faithfulness.compare import Protocol
from rcqa.faithfulness.deletion import OPERATORS
from rcqa.figures import methods
from rcqa.ui import inputs, runs, sanity, show, view
from rcqa.ui.results import comparisons, prices

chosen = view.view()


def show_verdicts(comparison) -> None:
    st.markdown(f"**{show.plain(methods.verdict_sentence(comparison))}**")
    protocol = comparison.protocol
    found = runs.methods_verdicts(comparison.fingerprint, protocol.operator, protocol.spare_answer)
    for name, summary in found:
        st.markdown(f"Over the run *{show.plain(name)}* of this model, same deletions: {show.plain(summary['verdict'])}")
    if not found:
        st.caption("No run of this model compared the methods under these deletions: `python -m rcqa reproduce "
                   f"--faithfulness --operator {protocol.operator}` over a dataset tells them apart (Dataset page).")
    if protocol.operator == "pad":
        st.caption("IG's baseline is this operator's replacement ([PAD] for every passage token), so under `pad` "
                   "IG's path ends where the deletions go, which favours IG; `remove` and `mask` do not.")


def show_comparison(comparison) -> None:
    show_verdicts(comparison)
    st.subheader("What each method says matters")
    show.chart(methods.method_passages(comparison, chosen.top_k))
    with st.expander("The same as a heatmap"):
        show.chart(methods.method_heatmap(comparison))
    st.subheader("Delete each method's top words: does the answer suffer more than with random words?")
    show.chart(methods.deletion_curves(comparison))
    st.caption(show.plain(methods.probability_note(comparison)))
    for name, sentence in methods.method_readings(comparison):
        st.markdown(f"**{name}**: {sentence}")
    st.caption(methods.summary_captions(comparison))
    show.table(methods.faithfulness_table(comparison), hide_index=True)
    with st.expander("Do the methods rank the words alike?"):
        kind = st.radio("Rank correlation", ["spearman", "kendall"], horizontal=True, key="rcqa.rank_correlation",
                        format_func={"spearman": "Spearman's ρ", "kendall": "Kendall's τ"}.get)
        show.chart(methods.rank_correlation(comparison, kind))


def main() -> None:
    st.title("Which explanation to trust?")
    st.caption("Six attribution methods explain the same answer, each ranked by its signed score (for the answer "
               "first, against it last) and by its magnitude, where it has a sign; deleting the words each ranks "
               "first, and comparing with deleting random words, shows which of them the model really relies on "
               "(Wu & Ong, “On Explaining Your Explanations of BERT”; ERASER).")
    if (chosen_inputs := inputs.page_inputs()) is None:
        return
    qa_model, current, settings = chosen_inputs
    settings = dataclasses.replace(settings, windows="answer")  # the methods compare on the answer's window
    operator = st.radio("Deleting a word means", list(OPERATORS), horizontal=True, key="rcqa.deletion_operator",
                        format_func=lambda name: f"{name}: {OPERATORS[name]}")
    spare = st.toggle("Never delete the answer's own words", value=True, key="rcqa.spare_answer",
                      help="Every method ranks the answer's words high, and deleting them removes the answer itself; "
                           "spared, the test asks which context words each method finds.")
    protocol = Protocol(operator=operator, spare_answer=spare)
    comparison = comparisons.stored_comparison(qa_model, current, settings, protocol)
    if comparison is None:
        if (price := comparisons.comparison_price(qa_model, current, settings, protocol)) is None:
            return
        if not prices.within_budget("comparison", price, "a shorter passage, or fewer IG steps"):
            return
        # then: its place in line, or result
        asked = comparisons.pending_comparison(qa_model, current, settings, protocol)
        if not asked and not st.button("Compare the methods", type="primary", key="rcqa.compare_methods"):
            st.caption(f"Scores the words with every method, then answers again {protocol.k} times and more per "
                       f"method with words deleted, and as often for {protocol.draws} random draws: "
                       f"{price.in_words()} on this server.")
            return
        comparison = comparisons.compute_comparison(qa_model, current, settings, protocol, price)
    if comparison is not None:
        show_comparison(comparison)
    sanity.sanity_section(qa_model, current, settings)


show.guarded(main)()
show.guarded(view.publish)()  # a link it cannot write is one sentence too
