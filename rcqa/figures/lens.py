"""What each layer knows and does: the answer lens (what each layer would answer) and the interventions (how much
the explained span's probability drops when a layer's words are knocked out, or its block is skipped)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from rcqa.figures.common import Chart, apply_layout, escape_label
from rcqa.lens import READERS, AnswerLens
from rcqa.lens.interventions import KNOCKOUT_BASELINES, Interventions

READER_COLOURS = {"head": "#1f77b4", "probe": "#ff7f0e"}
INTERVENTION_COLOURS = {"top-k": "#d62728", "random": "#7f7f7f", "bottom-k": "#2ca02c", "skip block": "#9467bd"}


def layer_answers_table(lens: AnswerLens) -> pd.DataFrame:
    """One row per layer and reader: the span it would answer, its probability, the final answer's rank and
    probability there, EM and F1 (empty without gold)."""
    return pd.DataFrame([{"layer": layer, "layer_label": label, "reader": reader,
                          **{name: value for name, value in readings[layer].to_dict().items()
                             if name not in ("start_char", "end_char")}}
                         for reader, readings in lens.readings.items() for layer, label in enumerate(lens.layers)])


def layer_answers(lens: AnswerLens) -> Chart:
    """Per layer and reader, the probability of the span it would answer (solid) and of the model's final answer
    (dashed); hovering names the span and the final answer's rank."""
    data = layer_answers_table(lens)
    figure = go.Figure()
    for reader, colour in READER_COLOURS.items():
        part = data[data.reader == reader]
        if part.empty:
            continue
        spans = [escape_label("(no word)" if pd.isna(span) else span) for span in part.span]  # None reads NaN
        figure.add_scatter(x=part.layer_label, y=100 * part.probability, mode="lines+markers", line_color=colour,
                           name=f"{reader}: its own best span", customdata=list(zip(spans, part.final_answer_rank)),
                           hovertemplate="%{x}: “%{customdata[0]}” %{y:.1f}%<extra>" + reader + "</extra>")
        figure.add_scatter(x=part.layer_label, y=100 * part.final_answer_probability, mode="lines+markers",
                           line={"color": colour, "dash": "dash"}, name=f"{reader}: the final answer",
                           customdata=part.final_answer_rank,
                           hovertemplate="%{x}: final answer %{y:.1f}%, rank %{customdata}<extra>" + reader
                                         + "</extra>")
    final = escape_label(lens.answer.text or "(none)")
    readers = " · ".join(f"{reader}: {READERS[reader]}" for reader in lens.readings)
    apply_layout(figure, "What each layer would answer", f"final answer “{final}” · {readers}", "Layer (output of)",
                 "Probability (%)", height=400)
    figure.update_yaxes(range=[0, 105])
    return Chart(f"answer-lens-{lens.example.id}", data, figure)


def knockouts_table(found: Interventions) -> pd.DataFrame:
    """One row per layer and intervention, as in the JSON: the explained span's probability after it, the drop from
    the unchanged probability, the spread over random draws (0 for the others), whether the answer flipped (the
    share of draws for random), and the words knocked out."""
    rows = []
    for layer in found.to_dict()["layers"]:
        random = layer["random"]
        kinds = {"top-k": layer["topk"], "bottom-k": layer["bottomk"], "skip block": layer["skip_block"],
                 "random": {"span_probability": random["span_probability_mean"], "drop": random["drop_mean"],
                            "flipped": random["flip_rate"], "words": []}}
        for kind, outcome in kinds.items():
            if outcome is not None:
                rows.append({"layer": layer["layer"], "layer_label": layer["label"], "intervention": kind,
                             "span_probability": outcome["span_probability"], "probability_drop": outcome["drop"],
                             "probability_drop_std": random["span_probability_std"] if kind == "random" else 0.0,
                             "flipped": float(outcome["flipped"]), "words": ", ".join(outcome["words"])})
    return pd.DataFrame(rows)


def knockouts(found: Interventions) -> Chart:
    """Per layer, how the explained span's probability changes when its top-k words, k random words (mean ± s.d.
    over the draws) or its bottom-k words are knocked out, and when its block is skipped: below 0 it fell, above 0 a
    knock-out raised it (removing a rival span's words can)."""
    data = knockouts_table(found)
    settings = found.settings
    figure = go.Figure()
    for kind, colour in INTERVENTION_COLOURS.items():
        part = data[data.intervention == kind]
        figure.add_bar(x=part.layer_label, y=-100 * part.probability_drop, name=kind, marker_color=colour,
                       error_y={"type": "data", "array": 100 * part.probability_drop_std, "visible": kind == "random"},
                       text=["flipped" if kind != "random" and f else "" for f in part.flipped],
                       customdata=list(zip(part.flipped, [escape_label(w) for w in part.words])),
                       hovertemplate="%{x}: %{y:+.1f} points · answer flipped: %{customdata[0]:.0%}"
                                     "<br>%{customdata[1]}<extra>" + kind + "</extra>")
    figure.add_hline(y=0, line_color="#444", line_width=1)
    k = settings.k
    apply_layout(figure, "How the explained span's probability changes when a layer's words are knocked out",
                 f"“{escape_label(found.explained_span)}”, unchanged {found.unchanged.span_probability:.1%} · "
                 f"top-{k} / bottom-{k} words by IG vs {k} random passage words (mean ± s.d. over {settings.draws} "
                 f"draws) · replaced by {KNOCKOUT_BASELINES[settings.baseline]} · skip block: the block replaced "
                 f"by the identity · {escape_label(knockout_reading(data))}", "Layer (output of)",
                 "Change in probability (percentage points; below 0: it fell)", height=440)
    figure.update_layout(barmode="group")
    return Chart(f"interventions-top{k}-{settings.baseline}", data, figure)


def knockout_reading(data: pd.DataFrame) -> str:
    """One sentence, from knockouts_table's rows, naming the knock-outs that raised the span's probability (a
    random draw's mean included), with by how much; or saying that none did."""
    raised = data[data.probability_drop < 0]
    if raised.empty:
        return "No knock-out raised the span's probability."
    listed = "; ".join(f"{row.intervention} at {row.layer_label} ({-100 * row.probability_drop:+.1f} points)"
                       for row in raised.itertuples())
    return (f"{len(raised)} knock-out{'s' * (len(raised) != 1)} raised the span's probability instead of lowering "
            f"it: {listed}")
