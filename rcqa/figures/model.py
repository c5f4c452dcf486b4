"""The loaded model in facts and its card's scores."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from rcqa.catalog import shown_name
from rcqa.figures.common import Chart, apply_layout, escape_label
from rcqa.intervals import excludes_zero
from rcqa.model import QAModel


def model_facts(qa_model: QAModel) -> pd.DataFrame:
    """What a researcher needs to know about the loaded model, as a two-column table; named as visitors see it
    (rcqa.catalog.shown_name: in public mode no path on the server)."""
    config = qa_model.config
    facts = {"name": shown_name(qa_model.name), "architecture": qa_model.architecture,
             "layers analysed": f"{qa_model.num_layers + 1}: embeddings and {qa_model.num_layers} blocks "
                                f"({qa_model.adapter.labels[1]} … {qa_model.adapter.labels[-1]})",
             "layer adapter": qa_model.adapter.describe(),
             "hidden size": getattr(config, "hidden_size", "?"),
             "attention heads": getattr(config, "num_attention_heads", "?"),
             "parameters": f"{qa_model.num_parameters:,}", "device": str(qa_model.device),
             "fingerprint": qa_model.fingerprint,
             "window": f"{qa_model.max_len} tokens, stride {qa_model.doc_stride}, "
                       f"question ≤ {qa_model.max_query_len} tokens",
             "no answer": (f"allowed by default: abstains when null score − best span score > "
                           f"{qa_model.null_threshold:.3f} (its card's threshold)" if qa_model.trained_with_unanswerable
                           else "not allowed by default: it always answers with its best span (its card does not "
                                "say it learned to abstain)")}
    return pd.DataFrame({"property": list(facts), "value": [str(v) for v in facts.values()]})


def card_scores(card: dict) -> pd.DataFrame:
    """The evaluation results in a model card: every entry holding exact_match and f1 (SQuAD v1.1's metric), and
    every one holding the v2.0 metric's exact and f1, with its answerable and unanswerable parts and, where it was
    measured, each kind of negative apart."""
    rows = []
    for name, value in card.items():
        if not isinstance(value, dict):
            continue
        if {"exact_match", "f1"} <= value.keys():
            forced = " (answers forced)" if value.get("answers") == "forced" else ""
            rows.append({"evaluated on": name + forced, "exact match": value["exact_match"], "F1": value["f1"],
                         "questions": value.get("n")})
        elif {"exact", "f1", "total"} <= value.keys():
            rows += _v2_rows(name, value)
    return pd.DataFrame(rows, columns=["evaluated on", "exact match", "F1", "questions"])


def _v2_rows(name: str, metrics: dict) -> list[dict]:
    rows = [{"evaluated on": name, "exact match": metrics["exact"], "F1": metrics["f1"], "questions": metrics["total"]}]
    for part in ("HasAns", "NoAns"):
        if f"{part}_f1" in metrics:
            rows.append({"evaluated on": f"{name}: {part}", "exact match": metrics[f"{part}_exact"],
                         "F1": metrics[f"{part}_f1"], "questions": metrics[f"{part}_total"]})
    for kind, part in metrics.get("by_kind", {}).items():
        rows.append({"evaluated on": f"{name}: answerable + {kind.replace('_', '-')} negatives",
                     "exact match": part["exact"], "F1": part["f1"], "questions": part["total"]})
    return rows


def abstention_tradeoff_chart(tradeoff: dict) -> Chart:
    """A card's abstention trade-off (rcqa.export.abstention.abstention_tradeoff): per model, the share of the counted
    unanswerable questions abstained on against the answerable questions' F1, one point per threshold, the tuned
    threshold marked; the floor of answerable F1 drawn across."""
    rows = [{"model": row["model"], "threshold": point["threshold"], "HasAns F1": point["HasAns_f1"],
             "abstained": point["abstained"], "of": point["of"], "abstained %": 100.0 * point["abstained"] / point["of"],
             "tuned threshold": point == row.get("at_threshold")}
            for row in tradeoff["models"] for point in row["curve"]]
    data = pd.DataFrame(rows)
    figure = go.Figure()
    for name, part in data.groupby("model", sort=False):
        figure.add_scatter(x=part["HasAns F1"], y=part["abstained %"], mode="lines+markers", name=escape_label(name),
                           line_shape="hv", marker={"size": 4},
                           customdata=part[["threshold", "abstained", "of"]].to_numpy(),
                           hovertemplate="threshold %{customdata[0]:.3f}: abstains on %{customdata[1]} of "
                                         "%{customdata[2]}, answerable F1 %{x:.2f}<extra></extra>")
        tuned = part[part["tuned threshold"]]
        if not tuned.empty:
            figure.add_scatter(x=tuned["HasAns F1"], y=tuned["abstained %"], mode="markers", showlegend=False,
                               marker={"size": 12, "symbol": "star"}, name=escape_label(f"{name}: tuned threshold"),
                               hovertemplate="tuned threshold: abstains on %{y:.0f} %, answerable F1 "
                                             "%{x:.2f}<extra></extra>")
    figure.add_vline(x=tradeoff["floor"], line_dash="dash", line_color="grey")
    kinds = " and ".join(kind.replace("_", " ") + "s" for kind in tradeoff["kinds"])
    apply_layout(figure, f"Abstention on the {kinds} against answerable F1",
                 f"{escape_label(tradeoff.get('file', 'the hard set'))}: one point per threshold (null score − best "
                 f"span score above it abstains); stars: each card's tuned threshold; dashed: answerable F1 "
                 f"{tradeoff['floor']:g}", "answerable F1 (HasAns)", "abstained on (%)")
    return Chart("abstention-tradeoff", data, figure)


def abstention_tradeoff_sentences(tradeoff: dict) -> list[str]:
    """What the trade-off shows, each sentence computed from the chart's numbers: per model, the most it abstains
    on while answerable F1 keeps the floor, and where its tuned threshold stands; then each tuned model against the
    first, told apart only where the paired interval excludes 0."""
    floor, sentences = tradeoff["floor"], []
    for row in tradeoff["models"]:
        stop = row["stops"]
        said = (f"{row['model']}: at most {stop['abstained']} of {stop['of']} abstained on with answerable F1 "
                f"{stop['HasAns_f1']:.2f} (≥ {floor:g})" if stop else
                f"{row['model']}: no threshold keeps answerable F1 at {floor:g}")
        if row.get("at_threshold"):
            at = row["at_threshold"]
            said += (f"; at its tuned threshold ({row['threshold']:.3f}) {at['abstained']} of {at['of']}, answerable "
                     f"F1 {at['HasAns_f1']:.2f}")
        sentences.append(said + ".")
    for compared in tradeoff["compared"]:
        difference = compared["abstained_difference"]
        n, low, high = difference["n"], difference["low"], difference["high"]
        told_apart = excludes_zero(low, high)
        interval = (f"paired 95 % interval {low * n:+.1f} to {high * n:+.1f} questions" if low is not None and
                    high is not None else "no interval over fewer than two questions")
        verdict = (f"abstains on {abs(difference['mean']) * n:.0f} {'more' if difference['mean'] > 0 else 'fewer'}"
                   f" of the {n} than {compared['against']}" if told_apart else
                   f"is not told apart from {compared['against']} ({difference['mean'] * n:+.0f} of the {n})")
        sentences.append(f"At their tuned thresholds {compared['model']} {verdict} ({interval}; "
                         f"{compared['only_model']} abstained on by {compared['model']} only, "
                         f"{compared['only_against']} by {compared['against']} only{_mcnemar(compared)}).")
    return sentences


def _mcnemar(compared: dict) -> str:
    return "" if compared.get("mcnemar_p") is None else f"; exact McNemar p {compared['mcnemar_p']:.2g}"
