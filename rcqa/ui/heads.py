"""The heads view, on Explore and on Compare layers: on a click, every attention head of the answer's window scored
through the queue (rcqa.attention_heads, priced by its cost), its layer × head grid for a chosen score with the
sentences read from it, and what one chosen head does."""
from __future__ import annotations

import streamlit as st

from rcqa import figures
from rcqa.attention_heads import HEAD_SCORES, HeadPatterns, HeadScores, first_step, heads_price
from rcqa.catalog import shown_name
from rcqa.figures.heads import TOP_ATTENDED
from rcqa.model import QAModel
from rcqa.qa import text_digest
from rcqa.types import Attribution
from rcqa.ui import show, view, worker
from rcqa.ui.results import per_layer, requested

KNOCKOUT_LABEL = "Knock-out: change in log p(span)"


def heads_request(qa_model: QAModel, result: Attribution) -> tuple[str, str, str]:
    """The heads' request: its model and the example's text, what they read (the answer's window, whatever the
    explanation's settings), so that every page and explanation of the question in a session finds the heads
    scored once (before, it was the explanation's key, and Compare layers or another method asked again)."""
    return "heads", qa_model.fingerprint, text_digest(result.example.passage, result.example.question)


def scored_heads(qa_model: QAModel, result: Attribution) -> tuple[HeadScores, HeadPatterns] | None:
    """The heads of the result's example scored, with their attention patterns, once asked for; None until then."""
    price = heads_price(qa_model, result.answer.n_windows, per_layer.result_window_tokens(qa_model, result))
    request = heads_request(qa_model, result)
    scores = ", ".join(score.short for score in HEAD_SCORES.values())
    if not requested.ask_button(request, "Score every attention head",
                                f"Knocks out each of the {qa_model.num_layers} × "
                                f"{qa_model.config.num_attention_heads} heads of {shown_name(qa_model.name)} in the "
                                f"answer's window, and scores each ({scores}): {price.in_words()} on this server."):
        return None
    return requested.queued(request, qa_model, worker.heads, result.example, label="Scoring every attention head…",
                            estimate=price, first_step=first_step(), shown=result.example)


def show_heads(qa_model: QAModel, result: Attribution) -> None:
    """The grid of the chosen score with its sentences and checks, then the chosen head's attention and effect."""
    if (found := scored_heads(qa_model, result)) is None:
        return
    scores, patterns = found
    chosen = view.view()
    labels = {"knockout": KNOCKOUT_LABEL, **{name: score.label for name, score in HEAD_SCORES.items()}}
    view.bind(st.radio, "head_score", "Grid of", options=list(labels), format_func=labels.get, horizontal=True)
    grid = figures.head_grid(scores, chosen.head_score)
    show.chart(grid)
    st.markdown(show.plain(figures.score_reading(grid.data, chosen.head_score)))
    st.markdown(show.plain(figures.agreement_reading(scores)))
    checks = figures.checks_table(scores)
    st.markdown(show.plain(figures.checks_reading(checks)))
    show.table(checks, hide_index=True, column_config={"completeness_gap": st.column_config.NumberColumn(
        format="percent")})
    st.markdown(show.plain(figures.flagged_reading(scores, patterns)))
    show_head(scores, patterns)


def show_head(scores: HeadScores, patterns: HeadPatterns) -> None:
    """What the chosen head does: its attention over the passage, its top attended tokens and its knock-out."""
    st.markdown("**What one head does**")
    view.fit_head(len(scores.layers), scores.heads)
    chosen = view.view()
    layer, head = st.columns(2)
    with layer:
        view.bind(st.selectbox, "head_layer", "Layer", options=list(range(len(scores.layers))),
                  format_func=scores.layers.__getitem__)
    with head:
        view.bind(st.selectbox, "head", "Head", options=list(range(scores.heads)), format_func="head {}".format)
    st.markdown(show.plain(figures.head_reading(scores, patterns, chosen.head_layer, chosen.head)))
    show.chart(figures.head_pattern(patterns, chosen.head_layer, chosen.head, scores.layers[chosen.head_layer],
                                    scores.example.id))
    st.caption(f"The passage's tokens each source attends to most (the answer span and the question: the mean over "
               f"their tokens), top {TOP_ATTENDED}.")
    show.table(figures.top_attended_table(patterns, chosen.head_layer, chosen.head), hide_index=True)

