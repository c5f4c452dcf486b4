"""Sanity checks (Adebayo et al.): how alike each method's word scores stay as the model's weights are
re-initialised from the top down, and the verdict each line leads to."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from rcqa.faithfulness.sanity import SanityCheck
from rcqa.figures.common import Chart, apply_layout
from rcqa.figures.methods import COLOURS

TITLE = "Sanity check: does the explanation change when the model is destroyed?"
_SERIES = {"cascade": "the model randomised from the top down", "independent": "one part randomised at a time"}


def step_labels(labels: list[str], series: str) -> list[str]:
    """Each step as the x axis names it, from the parts' labels: the cascade's the part it has reached ("… block
    3"), else the part."""
    return labels if series == "independent" else [labels[0], *(f"… {label}" for label in labels[1:])]


def sanity_table(found: SanityCheck, series: str = "cascade") -> pd.DataFrame:
    """One row per entry and step: Spearman's ρ with the trained model's word scores (NaN where undefined) and the
    share of its top-k words kept."""
    return pd.DataFrame([
        {"method": entry.label, "entry": entry.name, "series": series, "step": index, "randomised": label,
         "spearman": float("nan") if rho is None else rho, "top_k_overlap": overlap}
        for entry, result in found.entries.items()
        for index, (label, rho, overlap) in enumerate(zip(step_labels([p.label for p in found.parts], series),
                                                           result.spearman[series], result.top_k_overlap[series]))])


def sanity_curves(found: SanityCheck, series: str = "cascade") -> Chart:
    """Per method and ranking, Spearman's ρ of its word scores with the trained model's after each step; the
    line at which a method fails, and the step the verdict reads (cascade)."""
    data = sanity_table(found, series)
    figure = go.Figure()
    for entry in found.entries:
        rows, label = data[data.entry == entry.name], entry.label
        figure.add_scatter(x=rows.randomised, y=rows.spearman, mode="lines+markers", name=label,
                           line={"color": COLOURS.get(entry.method),
                                 "dash": "dot" if entry.ranking == "magnitude" else "solid"},
                           customdata=rows.top_k_overlap,
                           hovertemplate=(f"{label}, %{{x}}: ρ = %{{y:.2f}}, %{{customdata:.0%}} of the top-{found.k} "
                                          "words kept<extra></extra>"))
    read_at = found.parts[found.verdict_step].label
    figure.add_hline(y=found.fail_at, line={"dash": "dash", "color": "#d62728"},
                     annotation_text=f"fails at ρ ≥ {found.fail_at} (read after {read_at})" if series == "cascade"
                     else f"ρ = {found.fail_at}")
    apply_layout(figure, f"Sanity check: each method's word scores against the trained model's, {_SERIES[series]}",
                 f"Each part re-initialised with the model's own initialiser (seed {found.seed}) · a method whose "
                 "line stays high does not depend on what the model learnt",
                 "Parts of the model re-initialised", "Spearman's ρ with the trained model", height=460)
    figure.update_yaxes(range=[-1.05, 1.05])
    return Chart(f"sanity-{series}-{found.example.id}", data, figure)


def sanity_verdicts(found: SanityCheck) -> list[tuple[str, str]]:
    """(method and ranking, the sentence its cascade's numbers lead to), per entry."""
    return [(entry.label, found.verdict(entry)) for entry in found.entries]
