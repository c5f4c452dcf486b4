"""Two explanations side by side (rcqa.analysis.pair): both heatmaps on one word axis with their difference, the
divergence between them per layer, and each one's roles."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rcqa.analysis.pair import PAIR_VIEWS, SideBySide
from rcqa.analysis.words import word_scores
from rcqa.figures.common import Chart, apply_layout, colour_scale, escape_label, escape_text, signed, wrapped
from rcqa.figures.printed import Panel, printed_heatmaps
from rcqa.figures.roles import ROLE_COLOURS
from rcqa.figures.words import RANGE_SLIDER_HEIGHT, page_axis

SIDE_COLOURS = ("#1f77b4", "#ff7f0e")
SAME_POINTS = 0.005  # a difference under it shows as +0.00 points: none


def pair_table(pair: SideBySide) -> pd.DataFrame:
    """One row per layer and word of the common axis: each side's share (%; under a signed token score, with its
    word's sign; empty where its window does not hold the word) and the difference b − a (points)."""
    first, second = _drawn_shares(pair)
    difference = np.nan_to_num(second) - np.nan_to_num(first)  # a word only one side reads counts 0 on the other
    return pd.DataFrame([{"layer": layer, "layer_label": label, "position": position, "word": text,
                          "start_char": start, "end_char": end, "share_pct_a": 100 * first[layer, position],
                          "share_pct_b": 100 * second[layer, position],
                          "difference_pct": 100 * difference[layer, position]}
                         for layer, label in enumerate(pair.layers)
                         for position, (start, end, text) in enumerate(pair.words)])


def _drawn_shares(pair: SideBySide) -> tuple[np.ndarray, np.ndarray]:
    """Each side's shares on the common word axis (layers × words), each with its word's sign, which a magnitude
    never has below 0: under a signed token score a word against the explained span shows below 0."""
    column = {(start, end): i for i, (start, end, _) in enumerate(pair.words)}
    drawn = []
    for shares, result in zip(pair.shares, (pair.a, pair.b)):
        signs = np.ones_like(shares)
        signs[:, [column[(w.start_char, w.end_char)] for w in result.passage_words()]] = np.sign(
            word_scores(result, pair.aggregation)[:, result.passage_indices()])
        drawn.append(shares * signs)
    return drawn[0], drawn[1]


def pair_heatmaps(pair: SideBySide) -> Chart:
    """Layers × words for a, then for b, on one word axis, then b − a (red: more in b, blue: more in a). Paged on
    the page, it exports (PNG, SVG) every word instead: printed_heatmaps' rows, A, B and B − A side by side."""
    data = pair_table(pair)
    shape = (len(pair.layers), len(pair.words))
    words = [escape_label(text) for _, _, text in pair.words]
    hover = np.array([words] * shape[0])
    label_a, label_b = (escape_label(label) for label in pair.labels)
    sides = [data[column].to_numpy().reshape(shape) for column in ("share_pct_a", "share_pct_b")]
    difference = data.difference_pct.to_numpy().reshape(shape)
    extent = float(np.abs(np.nan_to_num(difference)).max(initial=0))
    alike = extent < SAME_POINTS  # float noise: a scale of ±1e-7 points would read as a difference
    figure = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                           subplot_titles=(f"A: {label_a}", f"B: {label_b}", "B − A (percentage points)" if not alike
                                           else f"B − A: none (under {SAME_POINTS} points at every word and layer)"))
    colours = colour_scale(pair.aggregation, np.stack(sides))
    shown_share = "%{z:+.2f}%" if signed(pair.aggregation) else "%{z:.2f}%"
    for row, (values, name) in enumerate(zip(sides, "AB"), 1):
        figure.add_heatmap(z=values, x=list(range(shape[1])), y=pair.layers, customdata=hover,
                           **{**colours, "colorbar": {**colours["colorbar"], "len": 0.6, "y": 0.75}},
                           showscale=row == 1,
                           hovertemplate=f"<b>%{{customdata}}</b> at %{{y}}<br>{name}: {shown_share}<extra></extra>",
                           row=row, col=1)
    scale = 1.0 if alike else extent
    apart: dict = {"colorscale": "RdBu", "reversescale": True, "zmid": 0, "zmin": -scale, "zmax": scale,
                   "colorbar": {"title": {"text": "B − A<br>(points)"}}}
    figure.add_heatmap(z=difference, x=list(range(shape[1])), y=pair.layers, customdata=hover,
                       **{**apart, "colorbar": {**apart["colorbar"], "len": 0.3, "y": 0.15}}, showscale=not alike,
                       hovertemplate="<b>%{customdata}</b> at %{y}<br>B − A: %{z:+.2f} points<extra></extra>",
                       row=3, col=1)
    figure.update_yaxes(autorange="reversed", type="category")
    paged = page_axis(figure, words, 0, row=3, col=1)
    title = "Two explanations side by side: each layer's share per passage word, and the difference"
    subtitle = (f"Each side's passage distribution (its layer's |attribution| over its window's words"
                f"{', each share with its word’s sign' if signed(pair.aggregation) else ''}){_only_one_side(pair)}")
    apply_layout(figure, title, subtitle, "", "",
                 height=3 * max(200, 22 * len(pair.layers) + 60) + 200 + (RANGE_SLIDER_HEIGHT if paged else 0),
                 subplot_titles=True)
    figure.update_xaxes(title_text=wrapped(f"Passage words (in text order{paged})"), row=3, col=1)
    panels = [Panel("A", sides[0], colours), Panel("B", sides[1], colours, scale=False),
              Panel("B − A (points)", difference, apart, scale=not alike)]
    export = printed_heatmaps(panels, words, pair.layers, title, f"A: {label_a} · B: {label_b} · {subtitle} · all "
                              f"{len(words)} passage words, in text order") if paged else None
    return Chart(f"side-by-side-{pair.a.example.id}", data, figure, export=export)


def _only_one_side(pair: SideBySide) -> str:
    """A note when the two windows differ: how many words only one side reads (blank there)."""
    missing_a, missing_b = (int(np.isnan(shares[0]).sum()) for shares in pair.shares)
    if not missing_a and not missing_b:
        return ""
    return f" · blank: a word outside that side's window ({missing_b} words only A reads, {missing_a} only B)"


def pair_jsd(pair: SideBySide) -> Chart:
    """Per layer, the Jensen–Shannon divergence between the two explanations' distributions."""
    data = pd.DataFrame({"layer": range(len(pair.layers)), "layer_label": pair.layers, "jsd": pair.jsd})
    text = ["undefined" if np.isnan(value) else f"{value:.3f}" for value in pair.jsd]
    figure = go.Figure(go.Bar(x=pair.layers, y=np.nan_to_num(pair.jsd), text=text, textposition="outside",
                              marker_color="#9467bd", hovertemplate="%{x}: JSD %{text} bits<extra></extra>"))
    apply_layout(figure, "How differently the two explanations spread each layer's attribution: Jensen–Shannon "
                 "divergence", "Between A's and B's distributions over the passage words at the same layer: 0 = the "
                 "same proportions, 1 = disjoint words; undefined where a layer has no attribution",
                 "Layer (output of)", "JSD (bits)", height=400)
    figure.update_yaxes(range=[0, max(0.05, 1.25 * float(np.nanmax(pair.jsd, initial=0)))])
    return Chart(f"side-by-side-jsd-{pair.a.example.id}", data, figure)


def pair_roles(pair: SideBySide) -> Chart:
    """Each side's roles per layer, stacked: the share of its top-k passage words that are answer, supporting, query,
    foil or other words (each word counted once)."""
    rows = [{"side": side, "layer": layer, "layer_label": label, "role": role, "share_pct": float(values[layer])}
            for side, roles in zip("AB", pair.roles) for role, values in roles.items()
            for layer, label in enumerate(pair.layers)]
    data = pd.DataFrame(rows)
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.05,
                           subplot_titles=tuple(f"{side}: {escape_label(_short(label))}"
                                                for side, label in zip("AB", pair.labels)))
    for column, side in enumerate("AB", 1):
        for role in dict.fromkeys(data.role):
            part = data[(data.side == side) & (data.role == role)]
            figure.add_bar(x=part.layer_label, y=part.share_pct, name=role, legendgroup=role, showlegend=column == 1,
                           marker_color=ROLE_COLOURS.get(role, ROLE_COLOURS["other"]),
                           hovertemplate=f"%{{x}}: %{{y:.0f}}% {role}<extra>{side}</extra>", row=1, col=column)
    figure.update_layout(barmode="stack")
    apply_layout(figure, f"What each side's top-{pair.k} passage words are, layer by layer",
                 "answer = inside the span that side explains · supporting = within 5 words of it · query = also in "
                 "the question · foil = inside a contrast's foil · each word counted once", "", "Share (%)",
                 height=440, subplot_titles=True)
    return Chart(f"side-by-side-roles-{pair.a.example.id}", data, figure)


def _short(label: str, most: int = 48) -> str:
    """A label that fits over half a figure (the page names both sides in full above their charts)."""
    return label if len(label) <= most else label[:most - 1] + "…"


def pair_chart(pair: SideBySide, view: str) -> Chart:
    """The Chart of one of PAIR_VIEWS."""
    charts = {"heatmaps": pair_heatmaps, "jsd": pair_jsd, "roles": pair_roles}
    if view not in charts:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(PAIR_VIEWS)}")
    return charts[view](pair)


def pair_html(pair: SideBySide) -> str:
    """Jupyter's view: what each side explains, both heatmaps with their difference, and the JSD per layer."""
    names = "".join(f"<li><strong>{side}</strong>: {escape_text(label)}</li>" for side, label in zip("AB", pair.labels))
    return (f"<div><p>{escape_text(pair.a.example.question)}</p><ul>{names}</ul>"
            f"{pair_heatmaps(pair).plotly._repr_html_()}{pair_jsd(pair).plotly._repr_html_()}</div>")
