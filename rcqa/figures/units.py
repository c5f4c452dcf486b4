"""An explanation read by sentence or by phrase (rcqa.types.granularity): a units × layers heatmap of each passage
unit's share of the layer's attribution over the passage, and, per layer, the unit it rests on most, in a sentence
read from the chart's own data. Units run down the rows, so a 1,500-word passage of 70 sentences stays one chart.
And the plausibility analysis' figure: where each layer's top token and sentence fall against the answer."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rcqa.analysis.plausibility import Plausibility
from rcqa.analysis.registry import Inputs, register_figure
from rcqa.figures.common import Chart, apply_layout, colour_scale, escape_label, settings_line, signed
from rcqa.text import shortened
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution
from rcqa.types.granularity import Granularity, UnitScores

LABEL_CHARS = 60  # a unit's row label: its first words


def unit_labels(numbers: Iterable[int], texts: Iterable[str], holds_answer: Iterable[bool],
                chars: int = LABEL_CHARS) -> list[str]:
    """A chart's row label for each unit: its number, ▶ before it where it holds the explained span, and its first
    words."""
    return [("▶ " if holds else "") + f"{n}. " + escape_label(shortened(text, chars))
            for n, text, holds in zip(numbers, texts, holds_answer)]


def unit_table(scores: UnitScores) -> pd.DataFrame:
    """One row per layer and passage unit: its text, its signed share of the layer's |attribution| over the passage
    units (%, the sign its score's), whether it holds the explained span, and its raw score."""
    passage = scores.passage_units()
    shares = scores.shares() * 100 * np.sign(scores.scores[:, passage])
    rows = [{"layer": layer, "layer_label": label, "unit": position + 1, "text": scores.units[index].text,
             "start_char": scores.units[index].start_char, "end_char": scores.units[index].end_char,
             "holds_answer": index == scores.answer_unit, "share_pct": float(shares[layer, position]),
             "score": float(scores.scores[layer, index])}
            for layer, label in enumerate(scores.layers) for position, index in enumerate(passage)]
    return pd.DataFrame(rows)


def unit_heatmap(result: Attribution, granularity: Granularity = "sentence",
                 aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """Passage units (rows, in text order) × layers: each unit's share of the layer's attribution over the passage;
    the unit holding the explained span is marked ▶."""
    scores = result.granularity(granularity, aggregation, target)
    table = unit_table(scores)
    units = table[table.layer == 0]
    share = table.share_pct.to_numpy().reshape(len(scores.layers), len(units)).T
    colours = colour_scale(aggregation, share)
    labels = unit_labels(units.unit, units.text, units.holds_answer)
    shown = "signed share %{z:+.1f}%" if signed(aggregation) else "share %{z:.1f}%"
    figure = go.Figure(go.Heatmap(z=share, x=scores.layers, y=labels, **colours,
                                  hovertemplate=f"%{{y}}<br>%{{x}}: {shown}<extra></extra>"))
    figure.update_yaxes(autorange="reversed", type="category", automargin=True)
    apply_layout(figure, f"Which {granularity} each layer rests on: each {granularity}'s share of the layer's "
                 "|attribution| over the passage", f"{settings_line(result, aggregation, target)} · ▶ holds the "
                 "explained span", "Layer (output of)", f"Passage {granularity}s, in text order",
                 height=max(320, 22 * len(units) + 200))
    return Chart(f"{granularity}s-{result.example.id}", table, figure)


def unit_readings(table: pd.DataFrame) -> list[str]:
    """Per layer, in words, from a unit_table: the unit with the largest share, its share, and whether it holds the
    explained span; a tie for the largest share is said as a tie."""
    readings = []
    for _, rows in table.groupby("layer", sort=True):
        magnitude = rows.share_pct.abs()
        if not (magnitude > 0).any():
            readings.append(f"{rows.layer_label.iloc[0]}: no passage unit has any attribution.")
            continue
        top = rows[np.isclose(magnitude, magnitude.max())]
        named = " and ".join(f"#{n}" + (" (holds the answer)" if holds else "")
                             for n, holds in zip(top.unit, top.holds_answer))
        tie = " tie" if len(top) > 1 else ""
        readings.append(f"{rows.layer_label.iloc[0]}: {named}{tie} with {magnitude.max():.0f}% of the layer's "
                        "attribution over the passage.")
    return readings


MEASURE_NAMES = {"top1_predicted": "top-1 token in the predicted span", "top1_gold": "top-1 token in a gold span",
                 "top2_predicted": "a top-2 token in the predicted span",
                 "iou_predicted": "IoU of the top-|span| tokens with the span",
                 "top1_sentence": "top sentence holds the answer"}


@register_figure("plausibility")
def plausibility_figure(found: Plausibility, inputs: Inputs) -> Chart:
    """Each plausibility measure at every layer, by magnitude (solid) and signed (dotted)."""
    layers = inputs.result.layers
    rows = [{"ranking": ranking, "measure": measure, "layer": layer, "layer_label": layers[layer], "value": value}
            for ranking, measures in found.measures.items() for measure, values in measures.items()
            for layer, value in enumerate(values)]
    data = pd.DataFrame(rows)
    figure = go.Figure([go.Scatter(x=layers, y=values, mode="lines+markers",
                                   name=f"{MEASURE_NAMES[measure]} ({ranking})",
                                   line={"dash": "solid" if ranking == "magnitude" else "dot"})
                        for ranking, measures in found.measures.items() for measure, values in measures.items()])
    apply_layout(figure, "Does each layer point at the answer? (DynamicLRP's plausibility, at every layer)",
                 f"{settings_line(inputs.result, inputs.aggregation, inputs.target)} · 1: yes, 0: no; a gap: undefined",
                 "Layer (output of)", "Value", height=420)
    return Chart(f"plausibility-{inputs.result.example.id}", data, figure)


def unit_layer_pair(result: Attribution, first: int, second: int, granularity: Granularity = "sentence",
                    aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """Two layers' unit shares side by side (units down the rows, so a long passage stays one chart), and what each
    unit gains from the first to the second (percentage points)."""
    table = unit_table(result.granularity(granularity, aggregation, target))
    a, b = (table[table.layer == layer].reset_index(drop=True) for layer in (first, second))
    label_a, label_b = result.layers[first], result.layers[second]
    data = pd.DataFrame({"unit": a.unit, "text": a.text, "holds_answer": a.holds_answer,
                         "share_pct_first": a.share_pct, "share_pct_second": b.share_pct,
                         "difference_pct": b.share_pct - a.share_pct, "first": label_a, "second": label_b})
    rows = unit_labels(a.unit, a.text, a.holds_answer)
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.05,
                           subplot_titles=(f"Share: {label_a} and {label_b} (%)", f"{label_b} − {label_a} (points)"))
    for column, label, colour in (("share_pct_first", label_a, "#1f77b4"), ("share_pct_second", label_b, "#ff7f0e")):
        figure.add_bar(x=data[column], y=rows, name=label, orientation="h", marker_color=colour,
                       hovertemplate=f"%{{y}}: %{{x:.1f}}% in {label}<extra></extra>", row=1, col=1)
    figure.add_bar(x=data.difference_pct, y=rows, orientation="h", showlegend=False, name="difference",
                   marker_color=np.where(data.difference_pct >= 0, "#ff7f0e", "#1f77b4"),
                   hovertemplate="%{y}: %{x:+.1f} points<extra></extra>", row=1, col=2)
    figure.update_layout(barmode="group")
    figure.update_yaxes(autorange="reversed", type="category", automargin=True)
    apply_layout(figure, f"Comparing two layers by {granularity}: {label_a} and {label_b}",
                 f"{settings_line(result, aggregation, target)} · ▶ holds the explained span", "", "",
                 height=max(360, 44 * len(rows) + 200), subplot_titles=True)
    return Chart(f"{granularity}s-{label_a}-vs-{label_b}-{result.example.id}".replace(" ", ""), data, figure)


def unit_layer_pair_reading(data: pd.DataFrame, granularity: Granularity = "sentence") -> str:
    """From a unit_layer_pair table: the unit that gains most from the first layer to the second and the one that
    loses most, in points; or that no unit moves by a tenth of a point."""
    first, second = data["first"].iloc[0], data["second"].iloc[0]
    gains = data.difference_pct.to_numpy()
    if np.abs(gains).max(initial=0) < 0.05:
        return f"From {first} to {second} no {granularity} moves by a tenth of a point."
    up, down = int(np.argmax(gains)), int(np.argmin(gains))
    return (f"From {first} to {second}, {granularity} #{data.unit.iloc[up]} gains most ({gains[up]:+.1f} points) and "
            f"#{data.unit.iloc[down]} loses most ({gains[down]:+.1f} points).")
