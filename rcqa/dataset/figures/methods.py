"""Which explanation to trust, over a dataset: each method's mean deletion curve beside random deletion's, the
summaries with their intervals, every pair's paired differences, and the sanity checks step by step."""
from __future__ import annotations

from dataclasses import astuple

import pandas as pd
import plotly.graph_objects as go

from rcqa.dataset.figures.common import interval_text
from rcqa.dataset.summary import DatasetSummary
from rcqa.faithfulness.entry import Entry, entry_label
from rcqa.dataset.faithfulness import held_summaries
from rcqa.faithfulness.summaries import FaithfulnessSummary
from rcqa.figures.common import Chart, apply_layout
from rcqa.figures.methods import COLOURS as METHOD_COLOURS
from rcqa.figures.sanity import step_labels


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
    """Per method: the mean of every summary the run holds (rcqa.faithfulness.summaries, in their order), the 95 %
    interval of those whose interval the table shows, and how often its AOPC beats random's."""
    found = summary.faithfulness
    if not found:
        return None
    held = held_summaries(found)
    return pd.DataFrame([{"method": entry_label(name),
                          **{column: value for s in held for column, value in _summary_cells(s, m[s.name]).items()},
                          "AOPC beats random (% of examples)": m["beats_random"]}
                         for name, m in found["methods"].items()])


def _summary_cells(summary: FaithfulnessSummary, found: dict) -> dict:
    return {summary.column: found["mean"],
            **({f"{summary.column} 95 % interval": interval_text(found)} if summary.interval_shown else {})}


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
        method, ranking = astuple(Entry.parse(name))  # the name as the run's summary keys it
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
