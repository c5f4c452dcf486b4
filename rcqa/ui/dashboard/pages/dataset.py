"""Does it hold over a dataset? The paper's dataset-level analyses of a `reproduce` run, filtered, beside the
published numbers; any example opens in Explore with the run's own explanation. The run and the filter live in the
link."""
import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

# drawn before rcqa is imported or a run read, since Streamlit sends each element as the script reaches it: on a
# fresh server rcqa.dataset imports PyTorch (5-8 s), and a 1,000-question run's rows take 3-4 s to read
st.title("Does it hold over a dataset?")
st.caption("The dataset-level analyses of Ramnath et al. (EMNLP 2020) over a `python -m rcqa reproduce` run, "
           "beside the published numbers. Layers are compared at equal relative depth: the published model "
           "(BERT-base) has 12 blocks.")
loading = st.empty()
loading.progress(0.0, text="Loading the dataset analyses…")

from rcqa.analysis.similarity import VARIANTS, describe
from rcqa.catalog import shown_name
from rcqa.dataset import figures, published
from rcqa.dataset.conclusions import (conclusion_table, contrast_statement, settings_words, verdicts,
                                      worst_completeness)
from rcqa.dataset.rows import QUESTION_TYPES
from rcqa.dataset.sentence_roles import sentences_source, sentences_statement
from rcqa.dataset.summary import DatasetSummary
from rcqa.ui import PAGES, runs, show
from rcqa.ui.errors import callback

ANY = "any"
CORRECTNESS = {ANY: None, "right (exact match)": True, "wrong": False}
QUANTIFIER = {ANY: None, "quantifier questions (how many / much)": True, "other questions": False}
ABSTENTION = {ANY: None, "answered": False, "abstained (no answer)": True}


CHOICE = "rcqa.dataset.choice"  # the page's runs.Choice: Streamlit drops a widget's state when another page is shown


def run_label(found: runs.Listed) -> str:
    return f"{found.name}: {found.questions:,} examples, model {shown_name(found.model)}"


def read_link(listed: list[runs.Listed]) -> None:
    """Keep the link's choice in the session when the page is first shown (each value it cannot use said in one
    sentence), and again should a run the session's choice holds be gone."""
    kept = st.session_state.get(CHOICE)
    here = {found.folder for found in listed}
    if kept is None or kept.run not in here or (kept.compare is not None and kept.compare not in here):
        st.session_state[CHOICE], problems = runs.from_link(st.query_params.to_dict(), listed)
        for problem in problems:
            st.warning(show.plain(problem))  # problems quote the link's values


def chosen() -> runs.Choice:
    return st.session_state[CHOICE]


def change(**fields: Any) -> None:
    st.session_state[CHOICE] = dataclasses.replace(chosen(), **fields)


def choose(field: str, label: str, options: dict[Any, Any], **kwargs: Any) -> None:
    """A selectbox over `options` (shown → meant) that shows and changes the choice's `field`."""
    key = f"rcqa.dataset.{field}"
    st.session_state[key] = next(shown for shown, meant in options.items() if meant == getattr(chosen(), field))
    st.selectbox(label, list(options), key=key,
                 on_change=callback(lambda: change(**{field: options[st.session_state[key]]})), **kwargs)


def choose_runs(listed: list[runs.Listed]) -> None:
    labels = {str(found.folder): run_label(found) for found in listed}
    folders = {str(found.folder): found.folder for found in listed}
    choose("run", "Run", folders, format_func=labels.__getitem__)
    if chosen().compare == chosen().run:  # the run now chosen was the one compared with it
        change(compare=None)
    others: dict[Any, Any] = {None: None, **{key: f for key, f in folders.items() if f != chosen().run}}
    choose("compare", "Compare with", others, format_func=lambda f: "nothing" if f is None else labels[f],
           help="another run (say the paper's code settings) asked the same questions")


def choose_filter(abstains: bool) -> None:
    """The filter widgets; the model's abstentions filter only a run whose model abstained."""
    kind, correct, quantifier, *abstention = st.columns(4 if abstains else 3)
    with kind:
        choose("question_type", "Question type", {ANY: None, **{t: t for t in QUESTION_TYPES}})
    with correct:
        choose("correct", "Answers", CORRECTNESS)
    with quantifier:
        choose("quantifier", "Questions", QUANTIFIER)
    if abstains:
        with abstention[0]:
            choose("abstained", "No answer", ABSTENTION, help="the questions the model answered, or abstained on")
    elif chosen().abstained is not None:  # a link's, for a run whose model never abstained
        change(abstained=None)


def publish(choice: runs.Choice) -> None:
    """Mirror the choice to the URL, so that a link reopens it."""
    if st.query_params.to_dict() != (wanted := runs.to_link(choice)):
        st.query_params.from_dict(wanted)


def staged(steps: list[tuple[str, Callable[[], Any]]]) -> list[Any]:
    """Each step's value, in turn, under the progress bar, which names the step (k of n)."""
    values = []
    for k, (doing, step) in enumerate(steps):
        loading.progress(k / len(steps), text=f"{doing} ({k + 1} of {len(steps)})…")
        values.append(step())
    loading.empty()
    return values


def show_facts(summary: DatasetSummary) -> None:
    columns = st.columns(5)
    columns[0].metric("Examples", f"{summary.n:,}", help=f"{summary.n_failed} failed in the run and are left out")
    columns[1].metric("Exact match", "–" if summary.exact_match is None else f"{summary.exact_match:.1f}")
    columns[2].metric("F1", "–" if summary.f1 is None else f"{summary.f1:.1f}",
                      help=f"BERT-base: {published.SCORES['f1'].value} ({published.SCORES['f1'].source})")
    columns[3].metric("Quantifier questions", f"{summary.quantifier['n_questions']:,}",
                      help=figures.quantifier_counts(summary.quantifier))
    worst = worst_completeness(summary)
    columns[4].metric("Worst median completeness error", "–" if worst is None else f"{100 * worst:.2f} %",
                      help="the largest per-layer median of |Σ attributions − ΔF| / |ΔF|: how far the "
                           "attributions add up")
    settings = summary.settings
    st.caption(f"Preset {settings.preset} · token score {settings.aggregation} · top-"
               f"{settings.top_k} words · {settings_words(settings.settings)} · model "
               f"fingerprint {summary.fingerprint}")


def show_sentences(summary: DatasetSummary, why_not: Callable[[], str]) -> None:
    """The layer roles by sentence, from the rows' sentence scores or an older run's word shares (its kept summary's):
    the sentence from its table, where its numbers come from, the figure and the table; else why_not()'s sentence."""
    chart = figures.sentences_by_layer(summary)
    if chart is None or summary.sentences is None:
        st.info(why_not())
        return
    st.markdown(f"**{show.plain(sentences_statement(summary.sentences, summary.layers))}**")
    st.caption(show.plain(sentences_source(summary.sentences)))
    show.chart(chart)
    show.table(figures.sentences_table(summary), hide_index=True)


def show_examples(folder: Path, wanted: runs.Filter) -> None:
    st.subheader("The examples")
    table = runs.examples_table(folder, wanted)
    picked = show.table(table, hide_index=True, on_select="rerun", selection_mode="single-row",
                        key="rcqa.dataset.examples", height=320,
                        column_config={"probability": st.column_config.NumberColumn(format="percent")})
    rows = picked.selection.rows
    if not rows:
        st.caption("Select a row to open that example in Explore with the run's settings and explanation.")
        return
    example_id = table.id.iloc[rows[0]]
    if st.button(f"Open {example_id} in Explore", type="primary", key="rcqa.dataset.open"):
        problem = runs.open_in_explore(runs.run(folder), example_id)
        if problem:
            st.error(problem)
        else:
            st.switch_page(PAGES / "explore.py")


def main() -> None:
    listed, unreadable = runs.listed_runs()
    if unreadable:
        st.caption(f"Left out, their manifest.json cannot be read: {show.plain(', '.join(unreadable))}.")
    if not listed:
        loading.empty()
        st.info("No run found. Make one with `python -m rcqa reproduce --data squad-dev --limit 100 --out runs/mine` "
                f"and start the app with `{runs.RUNS_ENV}=runs`.")
        return
    read_link(listed)
    choose_runs(listed)
    shown = [f for f in (chosen().run, chosen().compare) if f is not None]
    count = {found.folder: found.questions for found in listed}
    staged([(f"Reading run {f.name} ({count[f]:,} questions)", functools.partial(runs.run, f)) for f in shown])
    choose_filter(runs.abstains(shown[0]))
    publish(chosen())
    picked = chosen().filter
    averaged = staged([(f"Averaging over run {f.name}", functools.partial(runs.summary, f, picked)) for f in shown])
    by_run = {runs.run(f).name: summary for f, summary in zip(shown, averaged)}
    subject = by_run[runs.run(shown[0]).name]
    if subject is None:
        st.warning("No example of this run matches the filter.")
        return
    summaries = {name: s for name, s in by_run.items() if s is not None}
    show_facts(subject)

    st.subheader("Do the paper's conclusions hold?")
    conclusions = conclusion_table({name: verdicts(s) for name, s in summaries.items()})
    # the verdict first: the claims are long, and a narrow page would hide it off to the right
    show.table(conclusions[["holds", "claim", "evidence", "run"]], hide_index=True, wrap=True)
    if (contrast := figures.contrast_by_layer(subject)) is not None:
        st.subheader("Why this answer and not the foil?")
        assert subject.contrast is not None  # contrast_by_layer draws only a contrast run's
        if statement := contrast_statement(subject.contrast):
            st.markdown(f"**{show.plain(statement)}**")
        skipped = subject.n_skipped
        st.caption(f"{skipped} question{'' if skipped == 1 else 's'} without such a foil {'was' if skipped == 1 else 'were'} "
                   "skipped.")
        show.chart(contrast)
    roles, sentences, quantifiers, jsd, pos, scores, check = show.tabs(
        ["Layer roles", "Sentences", "Quantifier questions", "Layers compared (JSD)", "Parts of speech", "Scores",
         "Completeness"], key="rcqa.dataset_tabs")
    with roles:
        show.chart(figures.roles_by_depth(summaries))
        if parts := runs.abstention_parts(shown[0], picked):
            show.chart(figures.roles_by_abstention(parts, runs.run(shown[0]).name))
    with sentences:
        show_sentences(subject, functools.partial(runs.why_no_sentences, shown[0], picked))
    with quantifiers:
        for name, found in summaries.items():
            st.caption(f"{show.plain(name)}: {figures.quantifier_counts(found.quantifier)}")
        show.chart(figures.quantifier_by_depth(summaries))
    with jsd:
        variant = st.radio("Distributions", list(VARIANTS), format_func=lambda v: describe(v, 5), horizontal=True,
                           key="rcqa.dataset.variant")
        for name, found in summaries.items():
            show.chart(figures.jsd_map(found, variant, name))
    with pos:
        show.chart(figures.pos_by_layer(subject))
    with scores:
        show.chart(figures.scores_by_type(subject))
    with check:
        show.chart(figures.completeness_by_layer(summaries))
    for chart in (figures.lens_by_layer(subject), figures.interventions_by_layer(subject)):
        if chart is not None:
            show.chart(chart)
    if (methods := figures.faithfulness_curves(subject)) is not None:
        assert subject.faithfulness is not None  # faithfulness_curves draws only a run that compared the methods
        with st.expander("Which explanation to trust: the methods' deletion tests over the run", expanded=True):
            st.markdown(f"**{show.plain(subject.faithfulness['verdict'])}**")
            show.chart(methods)
            show.table(figures.faithfulness_table(subject), hide_index=True)
            st.caption("Every pair, question by question: A − B with a paired 95 % interval; told apart only where "
                       "it excludes 0.")
            show.table(figures.paired_table(subject), hide_index=True)
    with st.expander("Beside the published numbers (table)"):
        show.table(published.comparison(subject), hide_index=True)
    show_examples(shown[0], picked)


show.guarded(main)()
loading.empty()  # after an error too, which guarded says in one sentence: no bar left saying it loads
