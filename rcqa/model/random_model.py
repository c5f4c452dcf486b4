"""A randomly initialised BERT QA model of any shape, for timing (rcqa.bench)."""
from __future__ import annotations

import torch

from rcqa.catalog import DEFAULT_MODEL
from rcqa.model.checkpoint import resolve
from rcqa.model.device import pick_device
from rcqa.model.qa_model import DEFAULT_WINDOW, QAModel, SharedTokenizer


BERT_BASE = {"layers": 12, "hidden": 768, "heads": 12}


def random_bert(device: str | None = None, layers: int = BERT_BASE["layers"], hidden: int = BERT_BASE["hidden"],
                heads: int = BERT_BASE["heads"]) -> QAModel:
    """A randomly initialised BERT QA model for timing, BERT-base by default (12 layers, 768 hidden, 12 heads; the
    feed-forward 4 × hidden wide, as BERT's); it reads with the default model's uncased WordPiece tokenizer, which
    has BERT-base's vocabulary. Seeded: the same shape gives the same weights."""
    from transformers import AutoTokenizer, BertConfig, BertForQuestionAnswering

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(resolve(DEFAULT_MODEL)[0])
    model = BertForQuestionAnswering(BertConfig(vocab_size=len(tokenizer), num_hidden_layers=layers,
                                                hidden_size=hidden, num_attention_heads=heads,
                                                intermediate_size=4 * hidden))
    target = pick_device(device)
    # transformers wraps PreTrainedModel.to in a decorator whose declared type takes the model as its argument
    model.to(target).eval().requires_grad_(False)  # type: ignore[arg-type]
    shape = {"layers": layers, "hidden": hidden, "heads": heads}
    name = "random-bert-base" if shape == BERT_BASE else f"random-bert-L{layers}-H{hidden}-A{heads}"
    return QAModel(name=name, model=model, tokenizer=SharedTokenizer(tokenizer), device=target, **DEFAULT_WINDOW)
