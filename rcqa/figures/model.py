"""The loaded model in facts and its card's scores."""
from __future__ import annotations

import pandas as pd

from rcqa.catalog import shown_name
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
