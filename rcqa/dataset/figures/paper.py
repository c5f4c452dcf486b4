"""The paper's analyses over a dataset, each beside the published numbers it reproduces: what each layer's top-k
words are (roles, parts of speech, quantifiers), the JSD between layers, the scores per question type, and how
far each layer's numbers can be trusted (completeness): the views DatasetSummary.show draws."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rcqa.analysis.pos import GROUP_NAMES, GROUPS
from rcqa.analysis.roles.categories import CATEGORIES
from rcqa.analysis.similarity import describe
from rcqa.dataset import published
from rcqa.dataset.figures.common import (DASHES, DEPTH_AXIS, band, depths, long_table, number_text,
                                         published_points, slug, top_k)
from rcqa.dataset.summary import DatasetSummary
from rcqa.figures.common import Chart, apply_layout, largest
from rcqa.figures.roles import POS_COLOURS, ROLE_COLOURS


def roles_by_depth(runs: dict[str, DatasetSummary], chart_name: str = "dataset-roles", of: str = "") -> Chart:
    """The answer / supporting / query shares of the top-k per layer, with 95 % intervals, beside the MLRC
    reproduction's first and last layer. `runs` may also be one run's parts (answered and abstained questions),
    said in `of` after the title."""
    figure, tables = go.Figure(), []
    for dash, (name, summary) in zip(DASHES, runs.items()):
        table = long_table(name, summary, summary.roles, summary.roles_ci)
        tables.append(table)
        for category in CATEGORIES:
            part = table[table.series == category]
            band(figure, part, ROLE_COLOURS[category], category)
            figure.add_scatter(x=part.depth, y=part["mean"], mode="lines+markers", name=f"{category}: {name}",
                               line={"color": ROLE_COLOURS[category], "dash": dash}, customdata=part.layer,
                               hovertemplate=f"%{{customdata}}: %{{y:.1f}}% {category} ({name})<extra></extra>")
    tables.append(published_points(figure, published.ROLE_SHARES, ROLE_COLOURS))
    k = top_k(runs)
    apply_layout(figure, f"What the top-{k} words of each layer are, over the dataset{of}",
                 "mean share of each layer's top words per category, 95 % bootstrap band · markers: BERT-base, "
                 "MLRC reproduction (first and last layer)", DEPTH_AXIS, f"Share of the top-{k} words (%)", height=480)
    return Chart(chart_name, pd.concat(tables, ignore_index=True), figure)


def roles_by_abstention(parts: dict[str, DatasetSummary], run: str) -> Chart:
    """roles_by_depth of one run's answered and abstained questions, one line style each."""
    named = {f"{run}, {part} ({summary.n:,})": summary for part, summary in parts.items()}
    return roles_by_depth(named, "dataset-roles-by-abstention", ": answered and abstained questions")


def drawn_questions(quantifier: dict) -> str:
    """The questions a run's quantifier line is drawn over, as its legend says it: "154 of 158 questions" where
    some quantifier questions have no ratio (a passage with fewer than two numbers), so that the count the page shows
    beside the chart (all of them) and the legend's are seen to differ, and why (quantifier_counts)."""
    drawn, asked = quantifier["n_with_ratio"], quantifier["n_questions"]
    return f"{drawn} questions" if drawn == asked else f"{drawn} of {asked} questions"


def quantifier_counts(quantifier: dict) -> str:
    """One sentence: how many quantifier questions there are, and how many of them the quantifier chart draws."""
    drawn, asked = quantifier["n_with_ratio"], quantifier["n_questions"]
    if drawn == asked:
        return f"{asked:,} quantifier question{'' if asked == 1 else 's'}, all drawn."
    return (f"{asked:,} quantifier questions; {drawn:,} with two or more numbers in the passage are drawn (the ratio "
            f"is undefined for the other {asked - drawn:,}).")


def quantifier_by_depth(runs: dict[str, DatasetSummary]) -> Chart:
    """The quantifier ratio per layer on 'how many / how much' questions, beside the paper's and MLRC's."""
    figure, tables = go.Figure(), []
    for dash, (name, summary) in zip(DASHES, runs.items()):
        quantifier = summary.quantifier
        table = long_table(name, summary, {"quantifier ratio": quantifier["ratio"]},
                            {"quantifier ratio": quantifier["ratio_ci"]})
        tables.append(table)
        band(figure, table, "#9467bd", "quantifier ratio")
        figure.add_scatter(x=table.depth, y=table["mean"], mode="lines+markers", name=f"{name} "
                           f"({drawn_questions(quantifier)})", line={"color": "#9467bd", "dash": dash},
                           customdata=table.layer, hovertemplate="%{customdata}: %{y:.1f}%<extra></extra>")
    tables.append(published_points(figure, published.QUANTIFIER_RATIO, {"quantifier ratio": "#444"}))
    apply_layout(figure, "Quantifier questions: how much each layer's top words dwell on the passage's numbers",
                 "mean per-question ratio (numbers among the top-k, less one in the answer) / numbers in the passage, "
                 "95 % bootstrap band · markers: BERT-base (paper slides, MLRC)", DEPTH_AXIS,
                 "Numbers in the top-k (% of passage numbers)")
    figure.update_yaxes(rangemode="tozero")
    return Chart("dataset-quantifier", pd.concat(tables, ignore_index=True), figure)


def jsd_map(summary: DatasetSummary, variant: str, name: str = "") -> Chart:
    """The layer x layer JSD averaged over examples, with its off-diagonal range beside the paper's."""
    matrix = np.array([[np.nan if x is None else x for x in row] for row in summary.jsd[variant]], dtype=float)
    layers = summary.layers
    data = pd.DataFrame([{"layer_a": a, "layer_b": b, "jsd": matrix[i, j]}
                         for i, a in enumerate(layers) for j, b in enumerate(layers)])
    text = np.where(np.isnan(matrix), "undefined", np.char.mod("%.2f", np.nan_to_num(matrix)))
    figure = go.Figure(go.Heatmap(z=matrix, x=layers, y=layers, zmin=0, zmax=largest(matrix), colorscale="Viridis", text=text,
                                  texttemplate="%{text}", colorbar={"title": {"text": "JSD (bits)"}},
                                  hovertemplate="%{y} vs %{x}: mean JSD %{text}<extra></extra>"))
    figure.update_yaxes(autorange="reversed")
    ours = summary.jsd_range[variant]
    reference = published.JSD_RANGES.get(variant)
    paper = (f" · paper (BERT-base): {reference['min'].value:g}–{reference['max'].value:g}" if reference else "")
    span = "undefined" if ours["min"] is None else f"{ours['min']:.2f}–{ours['max']:.2f}"
    k = summary.settings.top_k
    apply_layout(figure, f"Mean JSD between layers ({describe(variant, k)}){' · ' + name if name else ''}",
                 f"off the diagonal: ours {span}{paper}", "Layer (output of)", "Layer (output of)",
                 height=max(420, 40 * len(layers) + 200))
    return Chart(f"dataset-jsd-{variant}" + (f"-{slug(name)}" if name else ""), data, figure)


def pos_by_layer(summary: DatasetSummary) -> Chart:
    """The POS mix of each layer's top-k words over the dataset, and that of the explained spans."""
    rows = [{"layer": label, "group": g, "mean": summary.pos[g][i], "ci_low": summary.pos_ci[g][i][0],
             "ci_high": summary.pos_ci[g][i][1]} for g in GROUPS for i, label in enumerate(summary.layers)]
    rows += [{"layer": "explained spans", "group": g, "mean": share, "ci_low": None, "ci_high": None}
             for g, share in summary.answer_pos.items()]
    data = pd.DataFrame(rows)
    figure = go.Figure()
    for group in GROUPS:
        part = data[data.group == group]
        name = GROUP_NAMES[group]
        figure.add_bar(x=part.layer, y=part["mean"], name=name, marker_color=POS_COLOURS[group],
                       hovertemplate=f"%{{x}}: %{{y:.1f}}% {name}<extra></extra>")
    figure.update_layout(barmode="stack")
    k = summary.settings.top_k
    apply_layout(figure, f"Parts of speech of each layer's top-{k} words, over the dataset",
                 "mean shares per layer; last bar: the words of the explained spans (the paper: answers are mostly "
                 "“entities”, here nouns, pronouns and numbers)", "Layer (output of)", "Share (%)")
    return Chart("dataset-pos", data, figure)


def scores_by_type(summary: DatasetSummary) -> Chart:
    """EM and F1 per question type, with how many questions each bar averages."""
    data = pd.DataFrame([{"question_type": t, "n": s["n"], "exact_match": s["exact_match"], "f1": s["f1"]}
                         for t, s in summary.question_types.items()])
    figure = go.Figure()
    for measure, colour in (("exact_match", "#1f77b4"), ("f1", "#ff7f0e")):
        figure.add_bar(x=[f"{t} ({n})" for t, n in zip(data.question_type, data.n)], y=data[measure],
                       name=measure.replace("_", " "), marker_color=colour,
                       hovertemplate=f"%{{x}}: {measure} %{{y:.1f}}<extra></extra>")
    apply_layout(figure, "Exact match and F1 per question type",
                 f"all {summary.n} explained questions: EM {number_text(summary.exact_match)}, F1 "
                 f"{number_text(summary.f1)} · BERT-base (MLRC): F1 {published.SCORES['f1'].value}",
                 "Question type (questions)", "Score (%)")
    return Chart("dataset-scores", data, figure)


def completeness_by_layer(runs: dict[str, DatasetSummary]) -> Chart:
    """Median and largest relative completeness error per layer: how far each run's numbers can be trusted."""
    rows = [{"run": name, "layer": label, "depth": depth, "median": summary.completeness["median"][i],
             "max": summary.completeness["max"][i]}
            for name, summary in runs.items()
            for i, (label, depth) in enumerate(zip(summary.layers, depths(summary)))
            if summary.completeness["median"]]
    data = pd.DataFrame(rows, columns=["run", "layer", "depth", "median", "max"])
    figure = go.Figure()
    for dash, name in zip(DASHES, runs):
        part = data[data.run == name]
        for measure, colour in (("median", "#2ca02c"), ("max", "#d62728")):
            figure.add_scatter(x=part.depth, y=100 * part[measure], mode="lines+markers", name=f"{measure}: {name}",
                               line={"color": colour, "dash": dash}, customdata=part.layer,
                               hovertemplate=f"%{{customdata}}: {measure} %{{y:.2f}}%<extra></extra>")
    figure.add_hline(y=1, line_dash="dot", annotation_text="1 %")
    apply_layout(figure, "Completeness: do each layer's attributions add up to F(input) − F(baseline)?",
                 "relative error |Σ attributions − ΔF| / |ΔF| over the examples; log scale", DEPTH_AXIS,
                 "Relative error (%)")
    figure.update_yaxes(type="log")
    return Chart("dataset-completeness", data, figure)
