"""Explore one question: the model's answer, then where each layer's attribution goes."""
import streamlit as st

from rcqa import figures
from rcqa.attribution.quadrature import RULES
from rcqa.attribution.settings import BASELINES, MAX_FOIL_TEXT, PRESETS, FoilSpec, SpanSpec
from rcqa.gallery import GALLERY
from rcqa.types import AGGREGATIONS
from rcqa.ui import PAGES, drawn, ends, examples, explore, inputs, show, view
from rcqa.ui.dashboard import explore_tabs
from rcqa.ui.results import answers, explanations

chosen = view.view()
WHY_NOT, FOIL_TEXT = "rcqa.why_not", "rcqa.foil_text"


def choose_example() -> None:
    """Where the question comes from and which it is, on the left; the question on the right."""
    source, asked = st.columns(2, gap="large")
    with source:
        choose_source()
    with asked:
        view.bind(st.text_input, "question", "Question", max_chars=examples.MAX_QUESTION_CHARS,
                  help="Edit it to ask something else about the same passage (the gold answer then no longer "
                       f"applies). {examples.QUESTION_LIMIT}")


def choose_source() -> None:
    view.bind(st.radio, "source", "Question from", options=list(view.SOURCES), format_func=view.SOURCES.get,
              horizontal=True, then=examples.ask_example_question)
    if chosen.source == "gallery":
        titles = {e.id: explore.example_label(e) for e in GALLERY}
        view.bind(st.selectbox, "example_id", "Gallery example", options=list(titles), format_func=titles.get,
                  then=examples.ask_example_question)
    elif chosen.source == "upload":
        st.file_uploader("SQuAD (v1.1 or v2.0) or DuoRC JSON file", type=["json"], key=examples.UPLOAD_WIDGET,
                         on_change=show.callback(examples.read_upload, "Reading the file"))
        examples.show_upload_error()
        if file := examples.uploaded():
            name, questions = file
            text = st.text_input("Search the questions", key="rcqa.upload_filter", max_chars=examples.SEARCH_CHARS,
                                 placeholder="words from the question or the article title",
                                 help=examples.box_limit("search", examples.SEARCH_CHARS))
            try:
                shown, total = examples.search(questions, text)
            except ValueError as error:
                st.warning(f"The search was not run: {show.plain(error)}.")
                shown, total = [], 0
            st.caption(explore.search_summary(name, len(questions), total, len(shown)))
            labels = {e.id: explore.example_label(e) for e in shown}
            view.bind(st.selectbox, "example_id", "Question in the file", options=list(labels), format_func=labels.get,
                      then=examples.ask_example_question, placeholder="Choose a question")
    else:
        view.bind(st.text_area, "passage", "Passage", height=180, max_chars=examples.MAX_PASSAGE_CHARS,
                  placeholder="Paste the passage that should hold the answer")
        st.caption(examples.PASSAGE_LIMIT)  # Streamlit ignores a longer paste whole: said before it bites
        if len(chosen.passage) > view.URL_PASSAGE_LIMIT:
            st.caption(f"This passage is longer than {view.URL_PASSAGE_LIMIT:,} characters, too long for a link: "
                       "the page's link carries only its fingerprint, and the passage is kept in this session only.")


def choose_windows(answer) -> None:
    """Whole passage or the answer's window, offered only when the passage has more than one window."""
    if answer.n_windows < 2:
        return
    labels = explore.window_labels(answer)
    view.bind(st.radio, "windows", "Windows explained", options=list(labels), format_func=labels.get, horizontal=True,
              help="The whole passage puts every window on one path, with one target over all of them: its words' "
                   "scores add up over the windows that read them (docs: Whole passages).")


def choose_settings(answer) -> None:
    view.bind(st.radio, "method", "Method", options=list(view.METHOD_NAMES), format_func=view.METHOD_NAMES.get,
              horizontal=True, help=explore.HELP["method"])
    st.caption(show.plain(explore.explained_target(chosen)))  # said where the method is chosen, not in a subtitle
    if len(view.method_windows(chosen.method)) > 1:
        choose_windows(answer)
    choose_ends()
    with st.expander("Attribution settings"):
        st.markdown("**What is attributed** (changing these computes a new explanation)")
        wide, narrow = st.columns([3, 2])
        with wide:
            view.bind(st.selectbox, "target", "Target F", options=list(view.PICKABLE_TARGETS),
                      format_func=lambda name: view.target_label(name, chosen.method), then=view.target_chosen)
            view.bind(st.selectbox, "baseline", "Baseline", options=list(BASELINES),
                      format_func=lambda name: f"{name}: {BASELINES[name]}")
            view.bind(st.selectbox, "rule", "Integration rule", options=list(RULES), format_func=view.RULE_NAMES.get)
        with narrow:
            view.bind(st.selectbox, "span", "Span the target is taken at", options=explore.span_choices(chosen),
                      format_func=view.span_label, spec=SpanSpec)
            view.bind(st.number_input, "steps", "Steps (path points)", min_value=1, max_value=chosen.max_steps,
                      disabled=chosen.rule == "paper_trapezoid",
                      help="The paper's released rule always evaluates its 20 points.")
            view.bind(st.selectbox, "tolerance", "Adaptive steps", options=list(view.TOLERANCES),
                      format_func=lambda t: "off: exactly these steps" if t is None else
                      f"refine until the error is under {t:.1%}",
                      help=explore.HELP["tolerance"])
        choose_foil()
        for column, (name, label) in zip(st.columns(3), explore.PRESET_LABELS.items()):
            column.button(label, on_click=show.callback(view.apply_preset), args=(name,), key=f"rcqa.preset.{name}",
                          help=PRESETS[name].description)
        st.markdown("**How the scores are read** (instant)")
        left, right = st.columns(2)
        with left:
            view.bind(st.selectbox, "aggregation", "Token score from its attribution vector",
                      options=list(AGGREGATIONS), format_func=figures.AGGREGATION_NAMES.get)
        with right:
            view.bind(st.number_input, "top_k", "Top-k words per layer", min_value=1, max_value=view.MAX_TOP_K)


def choose_ends() -> None:
    """Start and end joined or apart; where apart is not offered, joined (what is in force) and why."""
    label = "Start and end"
    if (refused := ends.refusal(chosen.target, chosen.contrast)) is not None:
        st.radio(label, ["joined"], format_func=ends.ENDS.get, horizontal=True, disabled=True,
                 key="rcqa.ends_refused")
        st.caption(refused)
        return
    view.bind(st.radio, "ends", label, options=list(ends.ENDS), format_func=ends.ENDS.get,
              horizontal=True, help="Apart also explains the span's start logit and end logit, each on its own, in the "
                                    "same job and on the same path points; every other view reads the target as chosen.")


def show_answer(qa_model, current):
    """The model's answer; the answer, or None when the example cannot be answered."""
    answer = answers.answer(qa_model, current)
    if answer is None:
        return None
    view.fit_target(answer)  # before the summary, which advises a target only where the one in force is not null
    st.caption("The model's answer")
    show.html(figures.answer_summary(current, answer, chosen.target))
    if note := inputs.unread_note(qa_model, current):  # most of its tokens unknown to this model's vocabulary
        st.warning(note)
    return answer


def show_passage(current, answer, foil=None) -> None:
    """The passage with the answer (and a contrast's foil, as the explanation placed it) marked, beside the n-best
    list: below the layers, which are what the page is for."""
    passage, candidates = st.columns([5, 4], gap="large")  # room for the n-best table's every column
    with passage:
        st.subheader("Passage")
        show.html(figures.answer_passage(current, answer, foil))
    with candidates:
        st.subheader("The other candidate spans it considered")
        show.html(figures.nbest_html(answer))


def choose_why_not(answer) -> None:
    """Pick a candidate span to ask why the model answered as it did rather than with it (the contrast against it),
    or, when it abstained, why it said "no answer" rather than it (target answer_vs_null)."""
    spans = explore.why_not_choices(answer)

    def picked() -> None:
        # a rank of this answer's list only: after the example changed, the browser may still send the last
        # example's choice, which Streamlit passes on as its label
        if (rank := st.session_state[WHY_NOT]) in spans:
            view.why_not(rank, answer.abstained)

    shown = view.why_not_rank(chosen, answer.abstained)
    st.session_state[WHY_NOT] = shown if shown in spans else None  # what is in force, as a link restores it
    st.selectbox("Why not this span?", list(spans), format_func=spans.__getitem__, key=WHY_NOT,
                 on_change=show.callback(picked), placeholder="Choose a candidate span",
                 help=explore.HELP["why_not_null" if answer.abstained else "why_not"])


def choose_foil() -> None:
    """The contrast's foil: a named one, or a span of the passage typed as written."""
    left, right = st.columns(2)
    with left:
        view.bind(st.selectbox, "contrast", "Why the span and not… (contrast)", options=explore.foil_choices(chosen),
                  format_func=view.foil_label, spec=FoilSpec,
                  help=explore.HELP["contrast"])
    with right:
        st.session_state[FOIL_TEXT] = explore.typed_foil(chosen)
        st.text_input("…or type a foil from the passage", key=FOIL_TEXT, max_chars=MAX_FOIL_TEXT,
                      on_change=show.callback(lambda: view.foil_typed(st.session_state[FOIL_TEXT])),
                      help="Matched as written (case included), at whole tokens; where it occurs several times, the "
                           "best-scoring place outside the span is taken.")


def heatmap_view() -> drawn.HeatmapView:
    """The heatmap tab's choices in force: what a requested explanation's worker draws with it."""
    return drawn.HeatmapView(chosen.aggregation, chosen.question_words, chosen.special_tokens)


def offer_side_by_side(current, answer) -> None:
    """Links to the side-by-side view of this explanation against the gold span's (when the model missed it),
    another model's or another foil's."""
    offers = explore.side_by_side_offers(chosen, current, answer)
    st.markdown("**Compare this explanation with…**")
    for column, (versus, label) in zip(st.columns(len(offers)), offers.items()):
        if column.button(label, key=f"rcqa.versus.{versus}", on_click=show.callback(view.update),
                         kwargs={"versus": versus}):
            st.switch_page(PAGES / "side_by_side.py")


def main() -> None:
    st.title("How does the model find its answer?")
    st.caption(explore.method_caption(chosen.method))
    view.show_url_problems()
    choose_example()
    qa_model = inputs.model()
    if qa_model is None:
        st.page_link(PAGES / "model.py", label="Choose a model on the Model page", icon=":material/memory:")
        return
    current = examples.example()
    if current is None:
        st.info("Choose a gallery example, upload a file, or paste a passage and a question.")
        return
    # the first screen is every layer's picture: the heatmap, with the answer and the controls that change it beside
    layers, controls = st.columns([3, 1], gap="medium")
    with controls:
        if (answer := show_answer(qa_model, current)) is None:
            return
        view.fit_windows(answer)
        choose_settings(answer)
        choose_why_not(answer)
    with layers:
        result = explain_every_layer(qa_model, current, answer)
    st.divider()
    show_passage(current, answer, result.targets[0].foil if result is not None else None)
    if result is not None:
        offer_side_by_side(current, answer)


def explain_every_layer(qa_model, current, answer):
    """The explanation's tabs, where it is stored (the gallery's ship with the package) or once asked for; until it
    is, the one this session showed last where it is this view by another method, so that switching the method
    keeps a picture in view. The result in force, or None."""
    try:
        settings = chosen.settings()
    except ValueError as error:
        show.report(error)
        return None
    if (refused := explore.method_refusal(qa_model, settings.method)) is not None:
        st.info(refused)  # before any job is queued
        return None
    result = explanations.result_on_click(qa_model, current, settings, explore.explained(settings, answer),
                                          heatmap_view())
    if result is not None:
        explore_tabs.show_result(chosen, result, qa_model, explanations.result_key(qa_model, current, settings))
    elif (earlier := explanations.kept_result()) is not None and earlier.example == current and \
            earlier.settings == view.settings_under(earlier.settings.method, answer):  # this view, another method
        st.info(explore.earlier_method_note(earlier, settings))
        earlier_key = explanations.result_key(qa_model, current, earlier.settings)
        explore_tabs.show_result(chosen, earlier, qa_model, earlier_key)
    return result


show.guarded(main)()
show.guarded(view.publish)()  # a link it cannot write is one sentence too
