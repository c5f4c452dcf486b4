"""Two explanations of one passage side by side by sentence (or phrase): each one's units × layers heatmap of the
layer's share over the passage, and, in words read from the chart's data, at which layers the two rest most on the
same unit. Units are spans of the passage's text, so explanations by two models, whose tokens differ, line up."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rcqa.figures.common import Chart, apply_layout, colour_scale, escape_label
from rcqa.figures.units import LABEL_CHARS, unit_labels, unit_table
from rcqa.text import shortened
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution
from rcqa.types.granularity import Granularity


def pair_unit_table(first: Attribution, second: Attribution, granularity: Granularity = "sentence",
                    aggregation: Aggregation = DEFAULT_AGGREGATION) -> pd.DataFrame:
    """One row per layer both explain (by label, in A's order) and passage unit either reads: its number, text,
    whether it holds A's explained span, and each side's signed share (%; NaN where its window does not hold it)."""
    tables = [unit_table(result.granularity(granularity, aggregation)) for result in (first, second)]
    layers = [label for label in first.layers if label in second.layers]
    keys = ["layer_label", "start_char"]
    merged = pd.merge(*(table[table.layer_label.isin(layers)][keys + ["end_char", "text", "holds_answer", "share_pct"]]
                        for table in tables), on=keys, how="outer", suffixes=("_a", "_b"))
    merged["text"] = merged.text_a.fillna(merged.text_b)
    merged["end_char"] = merged.end_char_a.fillna(merged.end_char_b).astype(int)
    merged["holds_answer"] = merged.holds_answer_a.astype("boolean").fillna(False).astype(bool)
    merged["layer"] = merged.layer_label.map({label: n for n, label in enumerate(layers)})
    merged = merged.sort_values(["layer", "start_char"]).reset_index(drop=True)
    starts = sorted(merged.start_char.unique())
    merged["unit"] = merged.start_char.map({start: n + 1 for n, start in enumerate(starts)})
    return merged[["layer", "layer_label", "unit", "text", "start_char", "end_char", "holds_answer", "share_pct_a",
                   "share_pct_b"]]


def pair_unit_heatmaps(first: Attribution, second: Attribution, labels: tuple[str, str],
                       granularity: Granularity = "sentence", aggregation: Aggregation = DEFAULT_AGGREGATION) -> Chart:
    """A's units × layers beside B's, on one colour scale; ▶ marks the unit holding A's explained span."""
    table = pair_unit_table(first, second, granularity, aggregation)
    layers = list(dict.fromkeys(table.layer_label))
    units = table[table.layer == 0]
    rows = unit_labels(units.unit, units.text, units.holds_answer)
    sides = [table[column].to_numpy().reshape(len(layers), len(units)).T for column in ("share_pct_a", "share_pct_b")]
    colours = colour_scale(aggregation, np.nan_to_num(np.concatenate(sides, axis=1)))
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=[f"A: {escape_label(shortened(labels[0], LABEL_CHARS))}",
                                           f"B: {escape_label(shortened(labels[1], LABEL_CHARS))}"])
    for column, share in enumerate(sides, start=1):
        figure.add_trace(go.Heatmap(z=share, x=layers, y=rows, **colours, showscale=column == 2,
                                    hovertemplate="%{y}<br>%{x}: share %{z:.1f}%<extra></extra>"), row=1, col=column)
    figure.update_yaxes(autorange="reversed", type="category", automargin=True)
    apply_layout(figure, f"Which {granularity} each layer rests on, A beside B", f"each {granularity}'s share of the "
                 "layer's |attribution| over the passage · ▶ holds A's explained span · blank: outside that side's "
                 "window", "Layer (output of)", "", height=max(320, 22 * len(units) + 200), subplot_titles=True)
    return Chart(f"pair-{granularity}s-{first.example.id}", table, figure)


def pair_unit_reading(table: pd.DataFrame, granularity: Granularity = "sentence") -> str:
    """From a pair_unit_table, at how many layers A and B rest most on the same unit (largest |share|; a layer where
    a side scores no unit has none), and where they part, which unit each rests on."""
    parted, same, layers = [], 0, 0
    for label, rows in table.groupby("layer", sort=True):
        tops = [_top(rows, column) for column in ("share_pct_a", "share_pct_b")]
        if None in tops:
            continue
        layers += 1
        if tops[0] == tops[1]:
            same += 1
        else:
            parted.append(f"{rows.layer_label.iloc[0]} (A #{tops[0]}, B #{tops[1]})")
    if not layers:
        return f"No layer has a {granularity} that both A and B score."
    said = (f"A and B rest most on the same {granularity} at {'every one' if same == layers else same} of the "
            f"{layers} layers where both score one")
    return said + (f"; they part at {', '.join(parted)}." if parted else ".")


def _top(rows: pd.DataFrame, column: str) -> int | None:
    magnitude = rows[column].abs().fillna(0.0).to_numpy()
    return int(rows.unit.iloc[int(np.argmax(magnitude))]) if magnitude.max(initial=0) > 0 else None
