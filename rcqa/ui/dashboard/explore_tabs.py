"""The explanation's tabs on the Explore page: the heatmap, sentences, top-k words, layer roles, one word across
layers, completeness, the answer lens, the interventions and the attention heads; only the open one is built.

Each function is handed the view as the page read it when its run began (`chosen`), as the page's own functions
read it."""
import functools

import streamlit as st

from rcqa import figures
from rcqa.attribution.layerwise import layerwise_method
from rcqa.faithfulness.sentences import sentence_check
from rcqa.types import Aggregation
from rcqa.ui import drawn, explore, heads, show, start_end, view, visitors
from rcqa.ui.results import per_layer, requested, sentences


def show_lens(qa_model, result, key: str) -> None:
    lens = per_layer.lens(qa_model, result, key)
    if lens is None:
        return
    show.chart(figures.layer_answers(lens))
    if lens.note:
        st.caption(f"Only the QA head reads the layers: {lens.note}.")
    percent = st.column_config.NumberColumn(format="percent")
    show.table(figures.layer_answers_table(lens).drop(columns="layer"), hide_index=True,
               column_config={"probability": percent, "final_answer_probability": percent})


def show_knockouts(chosen: view.View, qa_model, result, key: str) -> None:
    view.bind(st.radio, "knockout", "Replace a knocked-out word's states by", options=list(view.KNOCKOUT_NAMES),
              format_func=view.KNOCKOUT_NAMES.get, horizontal=True)
    request = ("knockouts", key, chosen.top_k, chosen.knockout, chosen.aggregation)
    if not requested.ask_button(request, "Knock out each layer's words", explore.knockouts_explained(chosen.top_k)):
        return
    if found := per_layer.knockouts(qa_model, result, request):
        chart = figures.knockouts(found)
        show.chart(chart)
        st.caption(show.plain(figures.knockout_reading(chart.data)))


FOCUS = "rcqa.heatmap_focus"  # (result key, passage character) of a sentence jumped to from the Sentences tab
EVIDENCE = 3  # the sentences offered to jump to, in a passage whose heatmap pages


def show_heatmap(chosen: view.View, result, charts, aggregation: Aggregation, key: str) -> None:
    """The heatmap, optionally over the whole input, after an overview of a long passage; the start and end logits
    apart where the result holds both."""
    question, special_tokens = st.columns(2)
    with question:
        view.bind(st.toggle, "question_words", "Include the question's words")
    special = chosen.shows_special_tokens(result.targets[0].explains_null)  # on for a null target unless toggled
    with special_tokens:
        view.bind(st.toggle, "special_tokens", "Include [CLS] and [SEP]", unset=special,
                      help="[CLS] is where a SQuAD 2.0 model reads “no answer”: an abstention is read there, so they "
                       "show by default where the target explains it (null, answer_vs_null).")
    focus = st.session_state.get(FOCUS)
    tab = drawn.heatmap_tab(charts, result, aggregation, chosen.question_words, special,
                            focus[1] if focus and focus[0] == key else None)
    if tab.overview is not None:
        show.chart(tab.overview)
    show.chart(tab.heatmap)
    start_end.show_apart(result, tab.apart, tab.apart_reading)


def show_sentence_check(chosen: view.View, qa_model, result, key: str, aggregation: Aggregation) -> None:
    """Below the sentences: the model re-answering without each of them (and ContextCite's surrogate), beside the
    explanation's shares at one layer, with what the numbers say."""
    st.markdown("**Does the model itself rest on those sentences?**")
    if result.targets[0].explains_null:
        st.caption("This check reads the probability of an answer span; this explanation explains “no answer”.")
        return
    if (evidence := sentences.sentence_evidence(qa_model, result, key)) is None:
        return
    chart = figures.sentence_check_chart(result, evidence, chosen.layer, aggregation)
    show.chart(chart)
    check = sentence_check(result, evidence.ablation, evidence.surrogate, aggregation)
    r2 = None if evidence.surrogate is None else evidence.surrogate.held_out_r2
    for reading in figures.sentence_check_readings(chart.data, check, result.layers, chosen.layer,
                                                   layerwise_method(result.settings.method).label, r2):
        st.markdown(show.plain(reading))


def show_units(chosen: view.View, result, charts, aggregation: Aggregation, key: str) -> None:
    """The passage by sentence (or phrase) at every layer, and in words which one each layer rests on most; in a
    passage whose heatmap pages, the units one layer rests on most, each a jump to its words on the heatmap."""
    view.bind(st.radio, "granularity", "Units", options=list(view.UNIT_GRANULARITIES), horizontal=True,
              format_func=lambda name: f"{name}s", help="Each unit scores the sum of its words' scores, so a layer's "
              "total is the same as on the heatmap; phrases are noun phrases, every other word alone.")
    chart = charts.get(figures.unit_heatmap, result, chosen.granularity, aggregation)
    show.chart(chart)
    with st.expander("Which unit each layer rests on most", expanded=True):
        for reading in figures.unit_readings(chart.data):
            st.markdown(show.plain(reading))
    view.bind(st.select_slider, "layer", "Layer", options=list(range(len(result.layers))),
              format_func=result.layers.__getitem__)
    if len(result.passage_words()) > figures.PAGE_WORDS:
        show_evidence(chart.data, chosen.layer, chosen.granularity, key)


def show_evidence(table, layer: int, granularity: str, key: str) -> None:
    """The units the layer rests on most, largest share first, each a button that opens the heatmap at its words."""
    shown = table[(table.layer == layer) & (table.share_pct.abs() > 0)]
    top = shown.reindex(shown.share_pct.abs().sort_values(ascending=False).index).head(EVIDENCE)
    st.markdown(f"**Evidence at {shown.layer_label.iloc[0] if len(shown) else 'this layer'}**: the {granularity}s it "
                "rests on most; each opens the heatmap at its words.")

    def jump(start_char: int) -> None:
        st.session_state[FOCUS] = (key, start_char)
        st.session_state["rcqa.explore_tabs"] = "Heatmap"

    for _, unit in top.iterrows():
        label = explore.evidence_label(unit.unit, unit.holds_answer, unit.share_pct, unit.text)
        st.button(label, key=f"rcqa.evidence.{unit.unit}", on_click=show.callback(jump, "Opening the heatmap there"),
                  args=(int(unit.start_char),))


def show_result(chosen: view.View, result, qa_model, key: str) -> None:
    """The result's tabs; only the open one is built (the others when opened), from the views kept for the result
    (rcqa.ui.drawn: its heatmap tab drawn by the worker that computed it)."""
    view.fit_layers(len(result.layers))
    k, aggregation = chosen.top_k, chosen.aggregation
    charts = drawn.charts_of(key, result.example, visitors.session_id())
    if incomplete := charts.get(explore.incomplete_warning, result):
        st.warning(incomplete)
    heatmap, by_sentence, top, roles, word, check, lens, knockouts, attention_heads = show.tabs(
        ["Heatmap", "Sentences", f"Top-{k} words", "Layer roles", "One word across layers", "Completeness",
         "Answer lens", "Interventions", "Attention heads"], key="rcqa.explore_tabs")
    if heatmap.open:
        with heatmap:
            show_heatmap(chosen, result, charts, aggregation, key)
    if by_sentence.open:
        with by_sentence:
            show_units(chosen, result, charts, aggregation, key)
            show_sentence_check(chosen, qa_model, result, key, aggregation)
    if top.open:
        with top:
            view.bind(st.select_slider, "layer", "Layer", options=list(range(len(result.layers))),
                      format_func=result.layers.__getitem__)
            show.chart(charts.get(figures.topk_passage, result, chosen.layer, k, aggregation))
            with st.expander("Every layer at once"):
                show.chart(charts.get(figures.topk_grid, result, k, aggregation))
    if roles.open:
        with roles:
            show_contrast(qa_model, result, key)
            show.chart(charts.get(figures.roles, result, k, aggregation))
            for phase, reading in charts.get(figures.role_readings, result, k, aggregation):
                st.markdown(f"**{phase}**: {reading}")
            show.chart(charts.get(figures.pos_mix, result, k, aggregation))
            if quantifiers := charts.get(figures.quantifiers, result, k, aggregation):
                show.chart(quantifiers)
    if word.open:
        with word:
            choices = charts.get(explore.word_choices, result)
            word_index = st.selectbox("Passage word", range(len(choices)),
                                      index=charts.get(figures.answer_word, result),
                                      format_func=choices.__getitem__, key=f"rcqa.word.{result.example.id}")
            show.chart(charts.get(figures.word_across_layers, result, word_index, aggregation))
    if check.open:
        with check:
            show.chart(charts.get(figures.completeness, result))
            for target in range(len(result.targets)):  # AttnLRP's ledger of each target, beside its conservation
                if (ledger := charts.get(figures.conservation_ledger, result, target)) is not None:
                    show.chart(ledger)
    for tab, section in ((lens, show_lens), (knockouts, functools.partial(show_knockouts, chosen))):
        if tab.open:
            with tab:
                if result.whole_passage:
                    st.info("This tab reads one window: choose the answer's window under “Windows explained” to "
                            "use it.")
                else:
                    section(qa_model, result, key)
    if attention_heads.open:
        with attention_heads:  # the answer's window, whatever the explanation read
            heads.show_heads(qa_model, result)


def show_contrast(qa_model, result, key: str) -> None:
    """For a contrast: its foil, and in words where the answer first beats it on the lens."""
    if not (readings := explore.contrast_readings(result)):
        return
    for reading in readings:
        st.markdown(reading)
    if (margins := per_layer.contrast_margins(qa_model, result, key)) is not None:
        st.markdown(show.plain(explore.margin_sentence(result, margins)))
