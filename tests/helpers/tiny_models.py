"""Tiny random extractive-QA checkpoints of every supported architecture, saved like real ones."""
from __future__ import annotations

import re
from pathlib import Path

import torch
from transformers import (
    AlbertConfig,
    AlbertForQuestionAnswering,
    BertConfig,
    BertForQuestionAnswering,
    BertModel,
    BertTokenizer,
    DistilBertConfig,
    DistilBertForQuestionAnswering,
    ElectraConfig,
    ElectraForQuestionAnswering,
    RobertaConfig,
    RobertaForQuestionAnswering,
    RobertaTokenizer,
)

from rcqa.gallery import GALLERY

ARCHITECTURES = ("bert", "distilbert", "albert", "electra", "roberta")
_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_SMALL = dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=64,
              max_position_embeddings=128)


def wordpiece_tokenizer() -> BertTokenizer:
    text = " ".join(e.passage + " " + e.question for e in GALLERY).lower()
    words = sorted(set(re.findall(r"\w+|[^\w\s]", text)))
    pieces = sorted({f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz0123456789"} | set("abcdefghijklmnopqrstuvwxyz0123456789"))
    vocab = {token: i for i, token in enumerate(_SPECIALS + words + [p for p in pieces if p not in words])}
    return BertTokenizer(vocab=vocab)


def byte_level_tokenizer() -> RobertaTokenizer:
    from tokenizers.pre_tokenizers import ByteLevel

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    vocab = {token: i for i, token in enumerate(specials + sorted(ByteLevel.alphabet()))}
    return RobertaTokenizer(vocab=vocab, merges=[])


def build(architecture: str, folder: Path, seed: int = 0) -> Path:
    """Save a random QA model of this architecture with a matching tokenizer into folder."""
    torch.manual_seed(seed)
    if architecture == "roberta":
        tokenizer = byte_level_tokenizer()
        config = RobertaConfig(vocab_size=len(tokenizer), pad_token_id=1, bos_token_id=0, eos_token_id=2,
                               type_vocab_size=1, **{**_SMALL, "max_position_embeddings": 130})
        model = RobertaForQuestionAnswering(config)
    else:
        tokenizer = wordpiece_tokenizer()
        vocab = len(tokenizer)
        if architecture == "bert":
            model = BertForQuestionAnswering(BertConfig(vocab_size=vocab, **_SMALL))
        elif architecture == "distilbert":
            model = DistilBertForQuestionAnswering(DistilBertConfig(
                vocab_size=vocab, dim=32, n_layers=3, n_heads=2, hidden_dim=64, max_position_embeddings=128))
        elif architecture == "albert":
            model = AlbertForQuestionAnswering(AlbertConfig(vocab_size=vocab, embedding_size=16, **_SMALL))
        elif architecture == "electra":
            model = ElectraForQuestionAnswering(ElectraConfig(vocab_size=vocab, embedding_size=16, **_SMALL))
        else:
            raise ValueError(architecture)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_encoder_without_head(folder: Path) -> Path:
    """A BERT encoder with no QA head: loading it as a QA model must be refused."""
    tokenizer = wordpiece_tokenizer()
    BertModel(BertConfig(vocab_size=len(tokenizer), **_SMALL)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
