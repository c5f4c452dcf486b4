"""The loaded model in facts and its card's scores."""
from __future__ import annotations

import pandas as pd

from rcqa.model import QAModel


def model_facts(qa_model: QAModel) -> pd.DataFrame:
    """What a researcher needs to know about the loaded model, as a two-column table."""
    config = qa_model.config
    facts = {"name": qa_model.name, "architecture": qa_model.architecture,
             "layers analysed": f"{qa_model.num_layers + 1}: embeddings and {qa_model.num_layers} encoder blocks",
             "hidden size": getattr(config, "hidden_size", "?"),
             "attention heads": getattr(config, "num_attention_heads", "?"),
             "parameters": f"{qa_model.num_parameters:,}", "device": str(qa_model.device),
             "fingerprint": qa_model.fingerprint,
             "window": f"{qa_model.max_len} tokens, stride {qa_model.doc_stride}, "
                       f"question ≤ {qa_model.max_query_len} tokens"}
    return pd.DataFrame({"property": list(facts), "value": [str(v) for v in facts.values()]})


def card_scores(card: dict) -> pd.DataFrame:
    """The evaluation results in a model card: every entry holding exact_match and f1."""
    rows = [{"evaluated on": name, "exact match": value["exact_match"], "F1": value["f1"], "questions": value.get("n")}
            for name, value in card.items() if isinstance(value, dict) and {"exact_match", "f1"} <= value.keys()]
    return pd.DataFrame(rows, columns=["evaluated on", "exact match", "F1", "questions"])
