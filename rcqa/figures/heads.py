"""Which attention heads carry the answer: a layer × head grid of one score (the knock-outs' change in the span's
log-probability, or a score that tries to predict it), and the sentence that reads it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rcqa.attention_heads import SCORES, SIGNED, HeadScores
from rcqa.figures.common import Chart, apply_layout, escape_label

HEAD_VIEWS = ("knockout", *SCORES)  # what HeadScores.show draws


def heads_table(found: HeadScores) -> pd.DataFrame:
    """One row per layer and head: the knock-out's change in log p(span), whether it changed the answer, and every
    score."""
    rows = []
    for layer, label in enumerate(found.layers):
        for head in range(found.heads):
            rows.append({"layer": layer, "layer_label": label, "head": head,
                         "delta_log_prob": float(found.knockout.delta_log_likelihood[layer, head]),
                         "flipped": bool(found.knockout.flips[layer, head]),
                         "answer_after": found.knockout.answers[layer][head],
                         **{name: float(score[layer, head]) for name, score in found.scores.items()}})
    return pd.DataFrame(rows)


def heads_reading(data: pd.DataFrame) -> str:
    """One sentence from the table: the head whose knock-out lowers log p(span) most, how many knock-outs lower it
    by more than 0.1, and how many change the answer."""
    worst = data.loc[data.delta_log_prob.idxmin()]
    if worst["delta_log_prob"] >= 0:
        return f"No head's knock-out lowers the span's log-probability; {int(data.flipped.sum())} change the answer."
    lowering = int((data.delta_log_prob < -0.1).sum())
    return (f"Knocking out {worst['layer_label']}, head {int(worst['head'])} lowers log p(span) most "
            f"({worst['delta_log_prob']:+.3f}); {lowering} of {len(data)} heads lower it by more than 0.1, and "
            f"{int(data.flipped.sum())} change the answer.")


def head_grid(found: HeadScores, view: str = "knockout") -> Chart:
    """The layer × head grid of the knock-outs' change in log p(span) (red: the span loses), or of a score (a
    signed one on the same red-blue scale)."""
    if view not in HEAD_VIEWS:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(HEAD_VIEWS)}")
    data = heads_table(found)
    column = "delta_log_prob" if view == "knockout" else view
    grid = data.pivot(index="layer", columns="head", values=column).to_numpy()
    signed = view == "knockout" or view in SIGNED
    figure = go.Figure(go.Heatmap(
        z=grid, x=[f"head {h}" for h in range(found.heads)], y=found.layers,
        colorscale="RdBu" if signed else "Viridis", zmid=0 if signed else None,
        hovertemplate="%{y}, %{x}: %{z:.4f}<extra></extra>"))
    title = ("Each head knocked out: change in log p(span)" if view == "knockout"
             else f"Each head's {SCORES[view]}")
    apply_layout(figure, title, f"explained span “{escape_label(found.explained_span)}” · fill: {found.fill}",
                 "Head", "Layer (block)", height=max(300, 40 * len(found.layers) + 120))
    return Chart(f"heads-{view}-{found.example.id}", data, figure)


def agreement_table(found: HeadScores) -> pd.DataFrame:
    """Per score and layer: Spearman's ρ with the knock-outs' |change in log p(span)| (HeadScores.agreement)."""
    return pd.DataFrame([{"score": name, "layer": layer, "layer_label": found.layers[layer], "spearman": rho}
                         for name, rhos in found.agreement().items() for layer, rho in enumerate(rhos)])


def mean_agreement(found: HeadScores) -> dict[str, float]:
    """Per score, its mean ρ over the layers where it is defined (NaN where none is)."""
    return {name: float(np.nanmean([np.nan if r is None else r for r in rhos]) if any(r is not None for r in rhos)
                        else np.nan) for name, rhos in found.agreement().items()}
