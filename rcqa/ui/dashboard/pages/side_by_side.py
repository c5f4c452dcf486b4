"""Two explanations of the current question side by side: the explanation Explore shows against the gold span's,
another model's or another foil's, layer by layer."""
from typing import cast

import streamlit as st

from rcqa import figures
from rcqa.analysis.pair import compare
from rcqa.attribution.settings import FOILS, FoilSpec
from rcqa.catalog import catalog, shown_name
from rcqa.types.granularity import Granularity
from rcqa.figures import pair
from rcqa.ui import explore, inputs, show, view
from rcqa.ui.results import answers, explanations

chosen = view.view()
SECOND = ".b"  # the session keeps the second explanation beside the first


def choose_versus(qa_model, current, answer) -> None:
    """What B is: the gold span, another model or another foil (kept in the view, so in the link); on a first
    visit, the gold span where the model missed it, else the runner-up."""
    kind = chosen.versus.kind if chosen.versus else explore.first_versus(current, answer)
    options = {"gold": view.VersusSpec("gold"),
               "model": view.VersusSpec("model", model=next((m for m in catalog() if m != chosen.model), chosen.model)),
               "foil": view.VersusSpec("foil", foil=FoilSpec("runner-up"))}

    def switched() -> None:
        view.update(versus=options[st.session_state["rcqa.versus_kind"]])

    st.session_state["rcqa.versus_kind"] = kind
    st.radio("Compare with", list(view.VERSUS_KINDS), format_func=view.VERSUS_KINDS.get, horizontal=True,
             key="rcqa.versus_kind", on_change=show.callback(switched))
    if chosen.versus is None:
        view.update(versus=options[kind])
    versus = chosen.versus
    assert versus is not None  # the update above set it on this same view
    if versus.model is not None:
        models = [name for name in catalog() if name != chosen.model] or [chosen.model]
        st.session_state["rcqa.versus_model"] = versus.model if versus.model in models else models[0]
        st.selectbox("The other model", models, key="rcqa.versus_model", format_func=shown_name,
                     on_change=show.callback(lambda: view.update(
                         versus=view.VersusSpec("model", model=st.session_state["rcqa.versus_model"]))))
    elif versus.foil is not None:
        foil = versus.foil.to_string()
        foils = [name for name in FOILS if ":" not in name] + [f"nbest:{rank}" for rank in range(1, 5)]
        foils += [foil] if foil not in foils else []
        st.session_state["rcqa.versus_foil"] = foil
        st.selectbox("B explains the answer against", foils, key="rcqa.versus_foil", format_func=view.foil_label,
                     on_change=show.callback(lambda: view.update(
                         versus=view.VersusSpec("foil", foil=FoilSpec.parse(st.session_state["rcqa.versus_foil"])))))
    elif not current.answers:
        st.info("This example has no gold answer: compare with another model or another foil.")


def explained_pair(qa_model, current, answer, settings):
    """Both explanations, from the cache or, on a click, through the job queue; None until then."""
    versus = chosen.versus
    assert versus is not None  # choose_versus set it
    other_model = qa_model if versus.model is None else inputs.named_model(versus.model)
    if other_model is None:
        return None
    other = versus.settings(settings)
    if same := explore.repeated_versus(qa_model, other_model, current, answer, settings, other):
        st.info(same)
        return None
    found = [explanations.stored_result(qa_model, current, settings),
             explanations.stored_result(other_model, current, other, SECOND)]
    asked = (explanations.pending_request(qa_model, current, settings) is not None
             or explanations.pending_request(other_model, current, other, SECOND) is not None)
    if None in found and not asked and not st.button("Explain both", type="primary", key="rcqa.explain_pair"):
        st.caption(f"Attributes every layer for A (what Explore explains) and for B ({view.versus_label(versus)}"
                   "), through the job queue; an explanation computed before comes from the cache.")
        return None
    first = found[0] or explanations.compute_result(qa_model, current, settings)
    second = found[1] or explanations.compute_result(other_model, current, other, SECOND)
    return None if first is None or second is None else (first, second)


def main() -> None:
    st.title("Two explanations side by side")
    if (chosen_inputs := inputs.page_inputs()) is None:
        return
    qa_model, current, settings = chosen_inputs
    if (answer := answers.answer(qa_model, current)) is None:
        return
    choose_versus(qa_model, current, answer)
    if (found := explained_pair(qa_model, current, answer, settings)) is None:
        return
    try:
        first, second = found
        side_by_side = compare(first, second, aggregation=chosen.aggregation, k=chosen.top_k)
    except ValueError as error:
        show.report(error)
        return
    for side, label in zip("AB", side_by_side.labels):
        st.markdown(f"**{side}**: {show.plain(label)}")
    if side_by_side.same_question_asked:
        st.info("A and B explain the same span with the same model and target, so they are the same explanation "
                "(the model's answer is the gold span here): compare with another model or another foil.")
    show.chart(pair.pair_heatmaps(side_by_side))
    show.chart(pair.pair_jsd(side_by_side))
    show.chart(pair.pair_roles(side_by_side))
    st.subheader("By sentence")
    view.bind(st.radio, "granularity", "Units", options=list(view.UNIT_GRANULARITIES), horizontal=True,
              format_func=lambda name: f"{name}s", help="Units are spans of the passage's text, so two models' "
              "explanations line up; a unit scores the sum of its words' scores.")
    granularity = cast(Granularity, chosen.granularity)  # one of UNIT_GRANULARITIES: the view admits no other
    chart = figures.pair_unit_heatmaps(first, second, side_by_side.labels, granularity, chosen.aggregation)
    show.chart(chart)
    st.markdown(show.plain(figures.pair_unit_reading(chart.data, granularity)))


show.guarded(main)()
show.guarded(view.publish)()  # a link it cannot write is one sentence too
