"""Compare layers of the current example's explanation: divergence, two layers side by side, token maps."""
from typing import cast

import streamlit as st

from rcqa import figures
from rcqa.analysis.projection import PROJECTIONS
from rcqa.analysis.similarity import VARIANTS, describe
from rcqa.types.granularity import Granularity
from rcqa.ui import analyses, heads, inputs, show, view
from rcqa.ui.results import explanations, per_layer

chosen = view.view()
_PROJECTION_NAMES = {"tsne": "t-SNE (the paper)", "pca": "PCA (fast, linear)"}


def main() -> None:
    st.title("Compare layers")
    if (chosen_inputs := inputs.page_inputs()) is None:
        return
    qa_model, current, settings = chosen_inputs
    if (result := explanations.result_on_click(qa_model, current, settings)) is None:
        return
    view.fit_layers(len(result.layers))
    layers = list(range(len(result.layers)))

    st.subheader("How alike are the layers?")
    view.bind(st.radio, "variant", "Compare", options=list(VARIANTS), horizontal=True,
              format_func=lambda v: describe(v, chosen.top_k))
    show.chart(figures.jsd(result, chosen.variant, chosen.top_k, chosen.aggregation))

    st.subheader("Two layers side by side")
    first, second = st.columns(2)
    with first:
        view.bind(st.selectbox, "first_layer", "First layer", options=layers, format_func=result.layers.__getitem__)
    with second:
        view.bind(st.selectbox, "second_layer", "Second layer", options=layers, format_func=result.layers.__getitem__)
    view.bind(st.radio, "pair_units", "Units", options=list(view.PAIR_UNITS), horizontal=True,
              format_func=lambda name: f"{name}s")
    if chosen.pair_units == "word":
        show.chart(figures.layer_pair(result, chosen.first_layer, chosen.second_layer, chosen.aggregation))
    else:
        units = cast(Granularity, chosen.pair_units)  # one of PAIR_UNITS: the view admits no other
        by_units = figures.unit_layer_pair(result, chosen.first_layer, chosen.second_layer, units, chosen.aggregation)
        show.chart(by_units)
        st.markdown(show.plain(figures.unit_layer_pair_reading(by_units.data, units)))

    analyses.optional_charts(qa_model, current, settings, result, chosen.aggregation, chosen.top_k)

    st.subheader("Which attention heads carry the answer")
    heads.show_heads(qa_model, result)

    st.subheader("Token vectors of one layer")
    method, layer = st.columns(2)
    with method:
        view.bind(st.radio, "projection", "Map", options=list(PROJECTIONS), format_func=_PROJECTION_NAMES.get, horizontal=True)
    with layer:
        view.bind(st.selectbox, "projection_layer", "Layer", options=layers, format_func=result.layers.__getitem__)
    if result.hidden_tokens is not None:
        st.caption(f"A whole passage keeps the layer outputs of its explained window (window {result.window + 1} of "
                   f"{result.windowing.n_windows}): the map shows that window's tokens.")
    if chart := per_layer.projection_chart(qa_model, explanations.result_key(qa_model, current, settings),
                                           chosen.projection_layer, chosen.projection, result):
        show.chart(chart)


show.guarded(main)()
show.guarded(view.publish)()  # a link it cannot write is one sentence too
