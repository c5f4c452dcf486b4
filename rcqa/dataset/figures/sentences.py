"""The layer roles by sentence over a run (rcqa.dataset.sentence_roles): per layer, the share of its attribution over
the passage on the answer's sentence, on the sentences sharing a question word and on the rest, and how often its top
sentence is the answer's, each with its 95 % interval."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from rcqa.dataset.sentence_roles import NAMES
from rcqa.dataset.summary import DatasetSummary
from rcqa.figures.common import Chart, apply_layout
from rcqa.figures.roles import ROLE_COLOURS

COLOURS = {"answer_sentence": ROLE_COLOURS["answer"], "question_sentences": ROLE_COLOURS["query"],
           "other_sentences": ROLE_COLOURS["other"], "top_is_answer": "#444"}


def sentences_frame(summary: DatasetSummary) -> pd.DataFrame | None:
    """One row per layer and role: its mean and interval in % (None for a summary without the section)."""
    found = summary.sentences
    if not found:
        return None
    return pd.DataFrame([{"layer": label, "series": name, "mean": _percent(value["mean"]),
                          "ci_low": _percent(value["low"]), "ci_high": _percent(value["high"]), "n": value["n"]}
                         for name in NAMES for label, value in zip(summary.layers, found[name])])


def sentences_by_layer(summary: DatasetSummary) -> Chart | None:
    """The section's figure: each role's share (%) per layer as a line with its interval as error bars, and the share
    of questions whose top sentence is the answer's, dashed; None for a summary without the section."""
    data = sentences_frame(summary)
    if data is None:
        return None
    figure = go.Figure()
    for name, called in NAMES.items():
        part = data[data.series == name]
        figure.add_scatter(x=part.layer, y=part["mean"], mode="lines+markers", name=called,
                           line={"color": COLOURS[name], "dash": "dash" if name == "top_is_answer" else "solid"},
                           error_y={"type": "data", "symmetric": False, "array": part.ci_high - part["mean"],
                                    "arrayminus": part["mean"] - part.ci_low},
                           hovertemplate=f"%{{x}}: {called} %{{y:.1f}}%<extra></extra>")
    assert summary.sentences is not None
    read, left = summary.sentences["questions"], sum(summary.sentences["left_out"].values())
    # an older run's word shares leave a tenth of SQuAD's questions out: the title says so beside the count
    counted = f"{read:,} of {read + left:,} questions" if left else f"{read:,} questions"
    apply_layout(figure, f"Which sentence does each layer rest on? {counted}",
                 "solid: the share of the layer's attribution over the passage on each kind of sentence; dashed: the "
                 "share of questions whose top sentence is the answer's; bars: 95 % bootstrap intervals",
                 # the subtitle says of what: a longer axis title ran into it on the page
                 "Layer (output of)", "Share (%)")
    return Chart("dataset-sentences", data, figure)


def sentences_table(summary: DatasetSummary) -> pd.DataFrame | None:
    """Per layer (rows) and role (columns), "mean [low, high]" in %; None for a summary without the section."""
    data = sentences_frame(summary)
    if data is None:
        return None
    cells = data.assign(cell=[_cell(row) for row in data.itertuples()])
    table = cells.pivot(index="layer", columns="series", values="cell").loc[summary.layers, list(NAMES)]
    return table.rename(columns=NAMES).reset_index()


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _cell(row) -> str:
    if pd.isna(row.ci_low):
        return f"{row.mean:.1f}"
    return f"{row.mean:.1f} [{row.ci_low:.1f}, {row.ci_high:.1f}]"
