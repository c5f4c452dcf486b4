"""Compare layers of the current example's explanation: divergence, two layers side by side, token maps."""
import streamlit as st

from rcqa import figures
from rcqa.analysis.projection import METHODS
from rcqa.analysis.similarity import VARIANTS, describe
from rcqa.ui import state

view = state.view()
_METHOD_NAMES = {"tsne": "t-SNE (the paper)", "pca": "PCA (fast, linear)"}


def main() -> None:
    st.title("Compare layers")
    if (inputs := state.page_inputs()) is None:
        return
    qa_model, current, settings = inputs
    result = state.stored_result(qa_model, current, settings) or state.compute_result(qa_model, current, settings)
    if result is None:
        return
    state.fit_layers(len(result.layers))
    layers = list(range(len(result.layers)))

    st.subheader("How alike are the layers?")
    state.bind(st.radio, "variant", "Compare", options=list(VARIANTS), horizontal=True,
               format_func=lambda v: describe(v, view.top_k))
    state.show(figures.jsd(result, view.variant, view.top_k, view.aggregation))

    st.subheader("Two layers side by side")
    first, second = st.columns(2)
    with first:
        state.bind(st.selectbox, "first_layer", "First layer", options=layers, format_func=result.layers.__getitem__)
    with second:
        state.bind(st.selectbox, "second_layer", "Second layer", options=layers, format_func=result.layers.__getitem__)
    state.show(figures.layer_pair(result, view.first_layer, view.second_layer, view.aggregation))

    st.subheader("Token vectors of one layer")
    method, layer = st.columns(2)
    with method:
        state.bind(st.radio, "projection", "Map", options=list(METHODS), format_func=_METHOD_NAMES.get, horizontal=True)
    with layer:
        state.bind(st.selectbox, "projection_layer", "Layer", options=layers, format_func=result.layers.__getitem__)
    state.show(state.projection_chart(state.result_key(qa_model, current, settings), view.projection_layer,
                                      view.projection, result))


main()
state.publish()
