"""Does it hold over a dataset? The paper's dataset-level analyses of a `reproduce` run, filtered, beside the
published numbers; any example opens in Explore with the run's own explanation."""
from pathlib import Path

import streamlit as st

from rcqa.analysis.similarity import VARIANTS, describe
from rcqa.catalog import shown_name
from rcqa.dataset import figures, published
from rcqa.dataset.conclusions import (conclusion_table, contrast_statement, settings_words, verdicts,
                                      worst_completeness)
from rcqa.dataset.rows import QUESTION_TYPES
from rcqa.dataset.summary import DatasetSummary
from rcqa.ui import PAGES, runs, show

ANY = "any"
CORRECTNESS = {ANY: None, "right (exact match)": True, "wrong": False}
QUANTIFIER = {ANY: None, "quantifier questions (how many / much)": True, "other questions": False}
ABSTENTION = {ANY: None, "answered": False, "abstained (no answer)": True}


def run_label(folder) -> str:
    found = runs.run(folder)
    return f"{found.name}: {found.rows.num_rows:,} examples, model {shown_name(found.manifest.model.name)}"


def choose_filter(abstains: bool) -> runs.Filter:
    """The filter widgets; the model's abstentions filter only a run whose model abstained."""
    kind, correct, quantifier, *abstention = st.columns(4 if abstains else 3)
    chosen_type = kind.selectbox("Question type", [ANY, *QUESTION_TYPES], key="rcqa.dataset.type")
    chosen_correct = correct.selectbox("Answers", list(CORRECTNESS), key="rcqa.dataset.correct")
    chosen_quantifier = quantifier.selectbox("Questions", list(QUANTIFIER), key="rcqa.dataset.quantifier")
    chosen_abstention = abstention[0].selectbox("No answer", list(ABSTENTION), key="rcqa.dataset.abstained",
                                                help="the questions the model answered, or abstained on") \
        if abstains else ANY
    return runs.Filter(None if chosen_type == ANY else chosen_type, CORRECTNESS[chosen_correct],
                       QUANTIFIER[chosen_quantifier], ABSTENTION[chosen_abstention])


def show_facts(summary: DatasetSummary) -> None:
    columns = st.columns(5)
    columns[0].metric("Examples", f"{summary.n:,}", help=f"{summary.n_failed} failed in the run and are left out")
    columns[1].metric("Exact match", "–" if summary.exact_match is None else f"{summary.exact_match:.1f}")
    columns[2].metric("F1", "–" if summary.f1 is None else f"{summary.f1:.1f}",
                      help=f"BERT-base: {published.SCORES['f1'].value} ({published.SCORES['f1'].source})")
    columns[3].metric("Quantifier questions", summary.quantifier["n_questions"])
    worst = worst_completeness(summary)
    columns[4].metric("Worst median completeness error", "–" if worst is None else f"{100 * worst:.2f} %",
                      help="the largest per-layer median of |Σ attributions − ΔF| / |ΔF|: how far the "
                           "attributions add up")
    settings = summary.settings
    st.caption(f"Preset {settings.preset} · token score {settings.aggregation} · top-"
               f"{settings.top_k} words · {settings_words(settings.settings)} · model "
               f"fingerprint {summary.fingerprint}")


def show_examples(folder, chosen: runs.Filter) -> None:
    st.subheader("The examples")
    table = runs.examples_table(folder, chosen)
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
    st.title("Does it hold over a dataset?")
    st.caption("The dataset-level analyses of Ramnath et al. (EMNLP 2020) over a `python -m rcqa reproduce` run, "
               "beside the published numbers. Layers are compared at equal relative depth: the published model "
               "(BERT-base) has 12 blocks.")
    folders, unreadable = runs.readable_runs()
    if unreadable:
        st.caption(f"Left out, their manifest.json cannot be read: {show.plain(', '.join(unreadable))}.")
    if not folders:
        st.info("No run found. Make one with `python -m rcqa reproduce --data squad-dev --limit 100 --out runs/mine` "
                f"and start the app with `{runs.RUNS_ENV}=runs`.")
        return
    labels = {str(f): run_label(f) for f in folders}
    chosen_run = st.selectbox("Run", list(labels), format_func=labels.__getitem__, key="rcqa.dataset.run")
    assert chosen_run is not None  # a selectbox with options always holds one
    others = [f for f in labels if f != chosen_run]
    compared = st.selectbox("Compare with", [None, *others], format_func=lambda f: "nothing" if f is None
                            else labels[f], key="rcqa.dataset.compare",
                            help="another run (say the paper's code settings) asked the same questions")
    chosen = choose_filter(runs.abstains(Path(chosen_run)))
    shown = [Path(f) for f in (chosen_run, compared) if f is not None]
    by_run = {runs.run(f).name: runs.summary(f, chosen) for f in shown}
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
    roles, quantifiers, jsd, pos, scores, check = show.tabs(
        ["Layer roles", "Quantifier questions", "Layers compared (JSD)", "Parts of speech", "Scores",
         "Completeness"], key="rcqa.dataset_tabs")
    with roles:
        show.chart(figures.roles_by_depth(summaries))
        if parts := runs.abstention_parts(shown[0], chosen):
            show.chart(figures.roles_by_abstention(parts, runs.run(shown[0]).name))
    with quantifiers:
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
    show_examples(shown[0], chosen)


show.guarded(main)()
