"""The model: what is in use and how well it answers; switch to a model this app offers (its embedded ones first),
or, except in public mode, a local folder or a hub id."""
import streamlit as st

from rcqa import figures
from rcqa.catalog import MAX_NAME, catalog, public_mode, shown_name
from rcqa.ui import inputs, show, view

chosen = view.view()
_KINDS = {"offered": "A model this app offers", "folder": "A local folder",
          "hub": "A hub id such as org/model (needs network access)"}
_EMBEDDED = {"default": "default: the embedded model (SQuAD v1.1), which always answers",
             "default-squad2": 'default-squad2: the embedded model that can answer "no answer" (SQuAD 2.0-style)'}


def describe_model() -> None:
    st.subheader("The model in use")
    qa_model = inputs.model()
    if qa_model is None:
        return
    show.table(figures.model_facts(qa_model), hide_index=True, wrap=True)
    scores = figures.card_scores(qa_model.card)
    if not scores.empty:
        st.subheader("Evaluation (from its model card)")
        show.table(scores, hide_index=True)
    if isinstance(qa_model.card.get("abstention_tradeoff"), dict):
        describe_tradeoff(qa_model.card["abstention_tradeoff"])
    if qa_model.card:
        with st.expander("The whole model card (rcqa_card.json)"):
            st.json(qa_model.card)
    else:
        st.caption("This model has no rcqa_card.json, so no evaluation results are recorded for it.")


def describe_tradeoff(tradeoff: dict) -> None:
    st.subheader("What its threshold trades (from its model card)")
    st.caption("How much of the hard set's unanswerable questions of these kinds each model abstains on at every "
               "threshold, against its F1 on the answerable ones (`python -m rcqa abstention-curve`).")
    show.chart(figures.abstention_tradeoff_chart(tradeoff))
    for sentence in figures.abstention_tradeoff_sentences(tradeoff):
        st.markdown(show.plain(sentence))


def choose_model() -> None:
    st.subheader("Use another model")
    public = public_mode()  # the catalog alone loads: no folder or hub id is offered only to be refused
    st.caption(("The models this server offers." if public else "Any extractive-QA checkpoint with a fast tokenizer.")
               + " The current example stays; its explanation is computed again for the new model when you ask "
                 "for it.")
    kind = "offered" if public else st.radio("Load", list(_KINDS), format_func=_KINDS.get, key="rcqa.model_kind")
    if kind == "offered":
        offered = list(dict.fromkeys([view.default_model(), *catalog()]))
        name = st.selectbox("Model", offered, key="rcqa.model_offered",
                            format_func=lambda n: _EMBEDDED.get(n, shown_name(n)) + (
                                " (the app's default)" if n == view.default_model() else ""))
    else:
        name = st.text_input("Folder" if kind == "folder" else "Hub id", key=f"rcqa.model_name.{kind}",
                             placeholder="/path/to/a/checkpoint" if kind == "folder" else "org/model",
                             max_chars=MAX_NAME)
    if st.button("Load this model", type="primary", disabled=not name.strip(), key="rcqa.load_model"):
        with st.spinner(f"Loading {show.plain(shown_name(name))}…"):
            error = inputs.switch_model(name)
        if error:
            st.error(f"The model could not be loaded: {show.plain(error)}")
            st.caption(f"The app keeps using {show.plain(shown_name(chosen.model))}.")
        else:
            st.success(f"Now using {show.plain(shown_name(chosen.model))}.")


def main() -> None:
    st.title("Model")
    view.show_url_problems()
    loaded = st.container()  # drawn after a switch, so that it shows the model just loaded
    choose_model()
    with loaded:
        describe_model()


show.guarded(main)()
show.guarded(view.publish)()  # a link it cannot write is one sentence too
