"""Figures of a dataset run: summaries in (rcqa.dataset.aggregate.summarize), Charts out, each beside the published
numbers it reproduces. Several runs share one chart where they answer the same question (one line style each);
layers are placed at relative depth so a 6-block model and BERT-base's 12 blocks line up."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rcqa.analysis.pos import GROUP_NAMES, GROUPS
from rcqa.analysis.roles import CATEGORIES
from rcqa.analysis.similarity import describe
from rcqa.dataset import published
from rcqa.dataset.layers import DECIDED as DECIDED_SHARE
from rcqa.dataset.summary import DatasetSummary
from rcqa.faithfulness.compare import entry_label
from rcqa.figures.common import Chart, apply_layout, largest
from rcqa.figures.methods import COLOURS as METHOD_COLOURS
from rcqa.figures.roles import POS_COLOURS, ROLE_COLOURS
from rcqa.figures.sanity import step_labels

DASHES = ("solid", "dash", "dot", "dashdot")
DEPTH_AXIS = "Relative depth (0 = embeddings, 1 = last block)"
SOURCE_SYMBOLS = {published.PAPER: "diamond", published.MLRC: "x"}
SOURCE_NAMES = {published.PAPER: "paper (slides)", published.MLRC: "MLRC reproduction"}


def _depths(summary: DatasetSummary) -> list[float]:
    return [published.depth(i, len(summary.layers)) for i in range(len(summary.layers))]


def _long_table(name: str, summary: DatasetSummary, series: dict[str, list], intervals: dict[str, list]) -> pd.DataFrame:
    return pd.DataFrame([{"run": name, "layer": label, "depth": depth, "series": key, "mean": values[i],
                          "ci_low": intervals[key][i][0], "ci_high": intervals[key][i][1]}
                         for key, values in series.items()
                         for i, (label, depth) in enumerate(zip(summary.layers, _depths(summary)))])


def _band(figure: go.Figure, part: pd.DataFrame, colour: str, label: str) -> None:
    """A 95 % interval as a filled band under its line."""
    part = part.dropna(subset=["ci_low", "ci_high"])
    if part.empty:
        return
    figure.add_scatter(x=list(part.depth) + list(part.depth[::-1]), y=list(part.ci_high) + list(part.ci_low[::-1]),
                       mode="lines", fill="toself", fillcolor=colour, opacity=0.15, line={"width": 0}, hoverinfo="skip",
                       showlegend=False, name=f"{label} 95 % interval")


def _published_points(figure: go.Figure, points: list[published.Published], colours: dict[str, str]) -> pd.DataFrame:
    rows, shown = [], set()
    for point in points:
        name = SOURCE_NAMES[point.source]
        label = f"{point.measure}: {name}"
        figure.add_scatter(x=[point.depth], y=[point.value], mode="markers", name=label, showlegend=label not in shown,
                           marker={"symbol": SOURCE_SYMBOLS[point.source], "size": 11,
                                   "color": colours.get(point.measure, "#444")}, legendgroup=name,
                           hovertemplate=f"{point.measure} {point.value:g}% at depth {point.depth:.2f}<br>"
                                         f"{point.source}<extra></extra>")
        shown.add(label)
        rows.append({"run": name, "depth": point.depth, "series": point.measure, "mean": point.value,
                     "source": point.source})
    return pd.DataFrame(rows)


def roles_by_depth(runs: dict[str, DatasetSummary], chart_name: str = "dataset-roles", of: str = "") -> Chart:
    """The answer / supporting / query shares of the top-k per layer, with 95 % intervals, beside the MLRC
    reproduction's first and last layer. `runs` may also be one run's parts (answered and abstained questions),
    said in `of` after the title."""
    figure, tables = go.Figure(), []
    for dash, (name, summary) in zip(DASHES, runs.items()):
        table = _long_table(name, summary, summary.roles, summary.roles_ci)
        tables.append(table)
        for category in CATEGORIES:
            part = table[table.series == category]
            _band(figure, part, ROLE_COLOURS[category], category)
            figure.add_scatter(x=part.depth, y=part["mean"], mode="lines+markers", name=f"{category}: {name}",
                               line={"color": ROLE_COLOURS[category], "dash": dash}, customdata=part.layer,
                               hovertemplate=f"%{{customdata}}: %{{y:.1f}}% {category} ({name})<extra></extra>")
    tables.append(_published_points(figure, published.ROLE_SHARES, ROLE_COLOURS))
    k = _k(runs)
    apply_layout(figure, f"What the top-{k} words of each layer are, over the dataset{of}",
                 "mean share of each layer's top words per category, 95 % bootstrap band · markers: BERT-base, "
                 "MLRC reproduction (first and last layer)", DEPTH_AXIS, f"Share of the top-{k} words (%)", height=480)
    return Chart(chart_name, pd.concat(tables, ignore_index=True), figure)


def roles_by_abstention(parts: dict[str, DatasetSummary], run: str) -> Chart:
    """roles_by_depth of one run's answered and abstained questions, one line style each."""
    named = {f"{run}, {part} ({summary.n:,})": summary for part, summary in parts.items()}
    return roles_by_depth(named, "dataset-roles-by-abstention", ": answered and abstained questions")


def quantifier_by_depth(runs: dict[str, DatasetSummary]) -> Chart:
    """The quantifier ratio per layer on 'how many / how much' questions, beside the paper's and MLRC's."""
    figure, tables = go.Figure(), []
    for dash, (name, summary) in zip(DASHES, runs.items()):
        quantifier = summary.quantifier
        table = _long_table(name, summary, {"quantifier ratio": quantifier["ratio"]},
                            {"quantifier ratio": quantifier["ratio_ci"]})
        tables.append(table)
        _band(figure, table, "#9467bd", "quantifier ratio")
        figure.add_scatter(x=table.depth, y=table["mean"], mode="lines+markers", name=f"{name} "
                           f"({quantifier['n_with_ratio']} questions)", line={"color": "#9467bd", "dash": dash},
                           customdata=table.layer, hovertemplate="%{customdata}: %{y:.1f}%<extra></extra>")
    tables.append(_published_points(figure, published.QUANTIFIER_RATIO, {"quantifier ratio": "#444"}))
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
    return Chart(f"dataset-jsd-{variant}" + (f"-{_slug(name)}" if name else ""), data, figure)


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
            for i, (label, depth) in enumerate(zip(summary.layers, _depths(summary)))
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


def _k(runs: dict[str, DatasetSummary]) -> int:
    return next(iter(runs.values())).settings.top_k


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def number_text(value: float | None, decimals: int = 1) -> str:
    """A number for a label or a table cell; an undefined one (None, NaN) as a dash."""
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.{decimals}f}"


def faithfulness_curves(summary: DatasetSummary) -> Chart | None:
    """Each method's mean deletion curve (the explained span's probability as its top-k words are deleted) beside
    random deletion's; None when the run did not compare the methods."""
    found = summary.faithfulness
    if not found:
        return None
    data = pd.DataFrame([{"method": entry_label(name), "k": k, "span_probability": p, "flip_rate_pct": flips}
                         for name, method in found["methods"].items()
                         for k, p, flips in zip(found["k"], method["span_probability"], method["flip_rate"])])
    figure = go.Figure()
    for name in map(entry_label, found["methods"]):
        part = data[data.method == name]
        figure.add_scatter(x=part.k, y=part.span_probability, mode="lines+markers", name=name,
                           line={"dash": "dash" if name == "random" else "solid", "width": 3 if name == "random" else 2},
                           hovertemplate=f"{name}: %{{y:.3f}} after deleting %{{x}} words<extra></extra>")
    apply_layout(figure, "Deleting each method's top words, over the dataset",
                 f"mean probability of the explained span after deleting the top-k passage words ({found['n']} "
                 f"examples, operator {found['operator']}); the dashed line deletes random words",
                 "Words deleted (k)", "Probability of the explained span")
    return Chart("dataset-faithfulness", data, figure)


def faithfulness_table(summary: DatasetSummary) -> pd.DataFrame | None:
    """Per method: comprehensiveness, sufficiency and AOPC with 95 % intervals, and how often it beats random."""
    found = summary.faithfulness
    if not found:
        return None
    normalised = any(m.get("naopc", {}).get("mean") is not None for m in found["methods"].values())
    return pd.DataFrame([{"method": entry_label(name),
                          **{f"{s}": m[s]["mean"] for s in ("comprehensiveness", "sufficiency", "aopc")},
                          "aopc 95 % interval": interval_text(m["aopc"]), "AOPC beats random (% of examples)":
                          m["beats_random"],
                          **({"normalised aopc": m["naopc"]["mean"], "normalised aopc 95 % interval":
                              interval_text(m["naopc"])} if normalised else {})}
                         for name, m in found["methods"].items()])


def paired_table(summary: DatasetSummary, measure: str = "aopc") -> pd.DataFrame | None:
    """Every pair of entries on one measure: A − B over the questions both define, its paired 95 % interval, how
    often each is ahead, the sign test, and whether the interval tells them apart (the rule the verdict reads)."""
    found = (summary.faithfulness or {}).get("paired")
    if not found:
        return None
    return pd.DataFrame([{"A": entry_label(p["a"]), "B": entry_label(p["b"]), f"{measure} A − B": p["mean"],
                          "95 % paired interval": interval_text(p), "questions": p["n"], "A ahead": p["a_ahead"],
                          "B ahead": p["b_ahead"], "sign test p": p["sign_test_p"],
                          "told apart": "yes" if p["told_apart"] else "no"} for p in found[measure]])


def interval_text(found: dict) -> str:
    """A mean's interval for a table cell; a dash where there is none (fewer than two values)."""
    return "–" if found["low"] is None else f"{found['low']:.3f} – {found['high']:.3f}"


LENS_COLOURS = {"head": "#1f77b4", "probe": "#ff7f0e"}
KNOCKOUT_COLOURS = {"topk": "#d62728", "random": "#7f7f7f", "bottomk": "#2ca02c", "skip_block": "#9467bd"}


def lens_by_layer(summary: DatasetSummary) -> Chart | None:
    """F1 against gold of the answer each layer's states hold, read by the QA head and by the probes, and how often
    the layer already ranks the model's final answer first; None when the run has no lens."""
    found = summary.lens
    if not found:
        return None
    data = pd.DataFrame([{"reader": reader, "layer": label, "f1": values["f1"][i],
                          "exact_match": values["exact_match"][i], "final_answer_first": values["final_answer_first"][i]}
                         for reader, values in found.items() for i, label in enumerate(summary.layers)])
    figure = go.Figure()
    for reader, values in found.items():
        part = data[data.reader == reader]
        decided = values["decided_at"]
        name = f"{reader}: F1" + ("" if decided is None else f" (decided at {summary.layers[decided]})")
        figure.add_scatter(x=part.layer, y=part.f1, mode="lines+markers", name=name,
                           line={"color": LENS_COLOURS.get(reader)}, hovertemplate="%{x}: F1 %{y:.1f}<extra></extra>")
        figure.add_scatter(x=part.layer, y=part.final_answer_first, mode="lines", name=f"{reader}: final answer first",
                           line={"color": LENS_COLOURS.get(reader), "dash": "dot"},
                           hovertemplate="%{x}: %{y:.0f}% rank the final answer first<extra></extra>")
    apply_layout(figure, "At which depth is the answer decided? The answer lens over the dataset",
                 f"solid: F1 against gold of the span each layer's states answer; dotted: % of examples whose layer "
                 f"already ranks the model's final answer first; decided = first layer at {DECIDED_SHARE:.0%} of the "
                 "last layer's F1", "Layer (output of)", "%")
    return Chart("dataset-lens", data, figure)


def interventions_by_layer(summary: DatasetSummary) -> Chart | None:
    """Per layer, how often the answer flips when its top-k, k random or bottom-k words are knocked out, or the
    block is skipped; None when the run has no interventions."""
    found = summary.interventions
    if not found:
        return None
    data = pd.DataFrame([{"knock_out": kind, "layer": label, "flip_rate_pct": rates[i],
                          "span_probability": found["probability"][kind][i]}
                         for kind, rates in found["flip_rate"].items() for i, label in enumerate(summary.layers)])
    figure = go.Figure()
    for kind, colour in KNOCKOUT_COLOURS.items():
        part = data[data.knock_out == kind]
        figure.add_scatter(x=part.layer, y=part.flip_rate_pct, mode="lines+markers", name=kind.replace("_", " "),
                           line={"color": colour, "dash": "dash" if kind == "random" else "solid"},
                           hovertemplate=f"%{{x}}: {kind} flips %{{y:.0f}}%<extra></extra>")
    apply_layout(figure, f"Does a layer's role hold when we intervene? Knocking out its top-{found['k']} words",
                 f"% of {found['n']} examples whose answer changes when the layer's top-k / k random / bottom-k words' "
                 f"states are replaced by the {found['baseline']} baseline, or the block is skipped",
                 "Layer (output of)", "Answers that change (%)")
    return Chart("dataset-interventions", data, figure)


SHARE_NAMES = {"other_numbers": "other numbers (neither answer nor foil)"}


def contrast_by_layer(summary: DatasetSummary) -> Chart | None:
    """A contrast run: per layer, the shares of answer, foil, supporting and query words and of the other numbers in
    the contrast's top-k (left axis) and the lens's mean margin log p(answer) − log p(foil) (right axis); None for
    another run."""
    found = summary.contrast
    if not found:
        return None
    layers = summary.layers
    data = pd.DataFrame([{"layer": label, "series": name, "value": values[i]}
                         for name, values in {**found["shares"], "lens margin": found["lens_margin"],
                                              "answer leads on the lens": found["lens_ahead"]}.items()
                         for i, label in enumerate(layers)])
    figure = go.Figure()
    for name in found["shares"]:
        part, shown = data[data.series == name], SHARE_NAMES.get(name, f"{name} words")
        figure.add_scatter(x=part.layer, y=part.value, mode="lines+markers", name=shown,
                           line={"color": ROLE_COLOURS[name]}, hovertemplate=f"%{{x}}: {shown} %{{y:.1f}}%<extra></extra>")
    part = data[data.series == "lens margin"]
    figure.add_scatter(x=part.layer, y=part.value, mode="lines", name="lens margin (right axis)", yaxis="y2",
                       line={"color": "#444", "dash": "dash"}, hovertemplate="%{x}: margin %{y:.2f}<extra></extra>")
    figure.update_layout(yaxis2={"title": "log p(answer) − log p(foil), on the lens", "overlaying": "y",
                                 "side": "right", "zeroline": True})
    apply_layout(figure, f"Why the answer and not the foil ({found['foil']})? {found['n']} questions",
                 "lines: what the top-k words of log p(answer) − log p(foil) are, per layer<br>dashed: the QA head's "
                 "mean margin of the answer over the foil, read from each layer's states", "Layer (output of)",
                 f"Share of the contrast's top-{summary.settings.top_k} words (%)", height=520)
    # the legend under the chart: at the right it would cover the margin's axis
    figure.update_layout(legend={"orientation": "h", "y": -0.22, "x": 0}, margin={"t": figure.layout.margin.t + 20, "b": 150})
    return Chart("dataset-contrast", data, figure)


def sanity_table(summary: DatasetSummary) -> pd.DataFrame | None:
    """Per entry, series and step: the mean ρ with its interval, the mean top-k overlap and the share (%) of
    questions at or above FAIL_AT; None when the run has no sanity checks."""
    found = summary.sanity
    if not found:
        return None
    return pd.DataFrame([
        {"method": entry["label"], "entry": name, "series": series, "step": index, "randomised": label,
         "mean_spearman": step["spearman"]["mean"], "ci_low": step["spearman"]["low"],
         "ci_high": step["spearman"]["high"], "questions": step["spearman"]["n"],
         "mean_top_k_overlap": step["top_k_overlap"], "at_or_above_fail_pct": step["at_or_above"]}
        for name, entry in found["entries"].items() for series in ("cascade", "independent")
        for index, (label, step) in enumerate(zip(step_labels(found["parts"], series), entry[series]))])


def sanity_by_step(summary: DatasetSummary) -> Chart | None:
    """Per entry, the mean ρ with the trained model's word scores after each cascade step, its 95 % interval as
    error bars, and the line at which an entry fails; None when the run has no sanity checks."""
    table = sanity_table(summary)
    if table is None:
        return None
    found, data = summary.sanity, table[table.series == "cascade"]
    assert found is not None  # sanity_table found the checks
    figure = go.Figure()
    for name, rows in data.groupby("entry", sort=False):
        method, _, ranking = name.partition(":")
        label = rows.method.iloc[0]
        figure.add_scatter(x=rows.randomised, y=rows.mean_spearman, mode="lines+markers", name=label,
                           error_y={"type": "data", "symmetric": False, "array": rows.ci_high - rows.mean_spearman,
                                    "arrayminus": rows.mean_spearman - rows.ci_low},
                           line={"color": METHOD_COLOURS.get(method),
                                 "dash": "dot" if ranking == "magnitude" else "solid"},
                           hovertemplate=f"{label}, %{{x}}: mean ρ = %{{y:.2f}}<extra></extra>")
    read_at = found["parts"][found["verdict_step"]]
    figure.add_hline(y=found["fail_at"], line={"dash": "dash", "color": "#d62728"},
                     annotation_text=f"fails at ρ ≥ {found['fail_at']} (read after {read_at})")
    apply_layout(figure, f"Sanity check over {found['n']} questions: the model randomised from the top down",
                 "mean Spearman ρ of each method's word scores with the trained model's, 95 % bootstrap interval over "
                 "questions · a method whose line stays high does not depend on what the model learnt",
                 "Parts of the model re-initialised", "Mean Spearman's ρ with the trained model", height=460)
    figure.update_yaxes(range=[-1.05, 1.05])
    return Chart("dataset-sanity", data, figure)


def heads_importance(summary: DatasetSummary) -> Chart | None:
    """The layer × head grid of the mean drop in log p(span) when each head is knocked out, over the run's
    questions; None when the run stored no head scores."""
    found = summary.heads
    if not found:
        return None
    drop = found["scores"]["knockout_drop"]
    data = pd.DataFrame([{"layer": layer, "layer_label": label, "head": head, "mean_drop": drop["mean"][layer][head],
                          "ci_low": drop["low"][layer][head], "ci_high": drop["high"][layer][head],
                          "flip_pct": found["flip_share"][layer][head]}
                         for layer, label in enumerate(found["layers"]) for head in range(found["heads"])])
    figure = go.Figure(go.Heatmap(z=data.pivot(index="layer", columns="head", values="mean_drop").to_numpy(),
                                  x=[f"head {h}" for h in range(found["heads"])], y=found["layers"],
                                  colorscale="RdBu_r", zmid=0,
                                  hovertemplate="%{y}, %{x}: mean drop %{z:.3f}<extra></extra>"))
    apply_layout(figure, f"Each head knocked out, over {found['n']} questions",
                 "mean drop in log p(span) (red: the answer needs the head)", "Head", "Layer (block)",
                 height=max(320, 40 * len(found["layers"]) + 140))
    return Chart("dataset-heads", data, figure)


def pruning_curves(summary: DatasetSummary) -> Chart | None:
    """F1 as heads are removed, least important first by each score, and in a random order (prune-heads); None
    when the run has no pruning curve."""
    found = summary.pruning
    if not found:
        return None
    data = pd.DataFrame([{"order": order, "heads_removed": count, "f1": f1}
                         for order, curve in found["f1"].items() for count, f1 in zip(found["counts"], curve)])
    figure = go.Figure()
    for order, rows in data.groupby("order", sort=False):
        figure.add_scatter(x=rows.heads_removed, y=rows.f1, mode="lines+markers", name=order,
                           line={"dash": "dot" if order == "random" else "solid"},
                           hovertemplate=f"{order}: %{{x}} heads removed, F1 %{{y:.1f}}<extra></extra>")
    apply_layout(figure, f"The pruning curve on {found['n']} questions", "F1 as heads are removed, the least "
                 "important first by each score's mean over the run (random: a seeded order)", "Heads removed",
                 "SQuAD F1", height=440)
    return Chart("dataset-pruning", data, figure)
