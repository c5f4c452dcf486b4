"""What each layer knows and does: the answer lens (what each layer would answer) and the interventions (how much
the explained span's probability drops when a layer's words are knocked out, or its block is skipped)."""
from __future__ import annotations

from collections import Counter

import pandas as pd
import plotly.graph_objects as go

from rcqa.figures.common import Chart, apply_layout, escape_label
from rcqa.lens import READERS, AnswerLens
from rcqa.lens.interventions import Interventions

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
    share of draws for random), the words knocked out, and those of them whose signed score is against the span
    (below 0; none for random draws, whose words differ draw to draw)."""
    rows = []
    for layer in found.to_dict()["layers"]:
        random = layer["random"]
        kinds = {"top-k": layer["topk"], "bottom-k": layer["bottomk"], "skip block": layer["skip_block"],
                 "random": {"span_probability": random["span_probability_mean"], "drop": random["drop_mean"],
                            "flipped": random["flip_rate"], "words": [], "signed_scores": []}}
        for kind, outcome in kinds.items():
            if outcome is not None:
                rows.append({"layer": layer["layer"], "layer_label": layer["label"], "intervention": kind,
                             "span_probability": outcome["span_probability"], "probability_drop": outcome["drop"],
                             "probability_drop_std": random["span_probability_std"] if kind == "random" else 0.0,
                             "flipped": float(outcome["flipped"]), "words": ", ".join(outcome["words"]),
                             "against_span": ", ".join(word for word, score in zip(outcome["words"],
                                                                                   outcome["signed_scores"])
                                                       if score < 0)})
    return pd.DataFrame(rows)


def knockouts(found: Interventions) -> Chart:
    """Per layer, how the explained span's probability changes when its top-k words, k random words (mean ± s.d.
    over the draws) or its bottom-k words are knocked out, and when its block is skipped: below 0 it fell, above 0 a
    knock-out raised it (removing a rival span's words can). The subtitle is one line of settings; what the bars
    say is knockout_reading's, under the chart."""
    data = knockouts_table(found)
    settings = found.settings
    figure = go.Figure()
    for kind, colour in INTERVENTION_COLOURS.items():
        part = data[data.intervention == kind]
        figure.add_bar(x=part.layer_label, y=-100 * part.probability_drop, name=kind, marker_color=colour,
                       error_y={"type": "data", "array": 100 * part.probability_drop_std, "visible": kind == "random"},
                       text=["flipped" if kind != "random" and f else "" for f in part.flipped],
                       customdata=list(zip(part.flipped, [escape_label(w) for w in part.words],
                                           [escape_label(w or "none") for w in part.against_span])),
                       hovertemplate="%{x}: %{y:+.1f} points · answer flipped: %{customdata[0]:.0%}"
                                     "<br>%{customdata[1]}<br>against the span: %{customdata[2]}<extra>" + kind
                                     + "</extra>")
    figure.add_hline(y=0, line_color="#444", line_width=1)
    k, span = settings.k, found.explained_span
    span = span if len(span) <= 24 else span[:23] + "…"  # the subtitle stays one line
    apply_layout(figure, "How the explained span's probability changes when a layer's words are knocked out",
                 f"“{escape_label(span)}”, unchanged {found.unchanged.span_probability:.1%} · top-{k}, bottom-{k}, "
                 f"{k} random words ({settings.draws} draws) · replaced by {KNOCKOUT_SHORT[settings.baseline]}",
                 "Layer (output of)", "Change in probability (points)", height=440)  # short: clear of the subtitle
    figure.update_layout(barmode="group")
    return Chart(f"interventions-top{k}-{settings.baseline}-{found.example.id}", data, figure)


KNOCKOUT_SHORT = {"pad": "[PAD] states", "zero": "zeros"}  # KNOCKOUT_BASELINES, short for a subtitle
RISES = {"top-k": "top-k words", "random": "random words", "bottom-k": "bottom-k words",
         "skip block": "skipping the block"}


def knockout_reading(data: pd.DataFrame) -> str:
    """At most two short sentences from knockouts_table's rows: at how many layers each kind of knock-out raised the
    span's probability (a rise of +0.0 at the shown precision is none), the top-k words' rises first, and, where
    those raised it, whether they are words that compete with the span (scored against it, ranked first by their
    magnitude)."""
    change = (-100 * data.probability_drop).round(1)
    rose = data[change > 0]
    if rose.empty:
        return "No knock-out raised the span's probability."
    counts = {kind: f"{RISES[kind]} at {(rose.intervention == kind).sum()} of {(data.intervention == kind).sum()} "
                    "layers" for kind in RISES if (rose.intervention == kind).any()}
    top = rose[rose.intervention == "top-k"]
    if top.empty:
        return f"Knocking out raised the span's probability instead of lowering it: {_and(list(counts.values()))}."
    low, high = change[top.index].min(), change[top.index].max()
    size = f"by {low:+.1f} to {high:+.1f} points" if len(top) > 1 else f"by {high:+.1f} points"
    others = [text for kind, text in counts.items() if kind != "top-k"]
    return (f"Knocking out the {counts['top-k']} raised the span's probability instead of lowering it, {size}"
            + (f" (and {_and(others)})" if others else "") + "." + _rivals(top))


def _rivals(top: pd.DataFrame) -> str:
    """Where the top-k knock-outs raised the span's probability: at how many of those layers some top word is
    scored against the span, and the words that are at the most of them, in one sentence ("" where none is)."""
    layers = Counter(word for words in top.against_span if words for word in dict.fromkeys(words.split(", ")))
    if not layers:
        return ""
    most = max(layers.values())
    named = [f"“{word}”" for word, count in layers.items() if count == most][:3]
    where = f"At {(top.against_span != '').sum()} of those {len(top)} layers" if len(top) > 1 else "There"
    return (f" {where} they include words that compete with the span, scored against it (signed score below 0) "
            f"but ranked first by their magnitude: {_and(named)}.")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
