"""A loaded extractive-QA model (QAModel): its network, the tokenizer its threads share, the windows it reads a long
passage in, its card, and what rcqa reads of it (its adapter, where "no answer" sits, its fingerprint)."""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypedDict

import torch

from rcqa.adapter.discovery import adapter_of
from rcqa.adapter.model_adapter import ModelAdapter

if TYPE_CHECKING:
    from transformers import PreTrainedModel


class Window(TypedDict):
    """How a model reads a long passage: QAModel's window fields."""
    max_len: int
    doc_stride: int
    max_query_len: int


DEFAULT_WINDOW: Window = {"max_len": 384, "doc_stride": 128, "max_query_len": 64}


class ModelLoadError(RuntimeError):
    """A model that cannot be loaded; the message says why and how to fix it."""


@dataclass(eq=False, repr=False)
class QAModel:
    """A loaded extractive-QA model with its tokenizer and the window settings it answers with."""

    name: str
    model: PreTrainedModel  # transformers' question-answering model (AutoModelForQuestionAnswering's, or a BERT)
    tokenizer: "SharedTokenizer"
    device: torch.device
    max_len: int
    doc_stride: int
    max_query_len: int
    card: dict = field(default_factory=dict)

    @property
    def config(self):
        return self.model.config

    def __repr__(self) -> str:
        """One line (the dataclass's repr printed the whole network and its card): name, family, blocks, device and
        the fingerprint, which explanations and the result cache record."""
        return (f"<QAModel {self.name!r}: {self.config.model_type} {self.architecture}, {self.num_layers} blocks, "
                f"{self.device}, fingerprint {self.fingerprint}>")

    @property
    def trained_with_unanswerable(self) -> bool:
        """Whether the card says the model learned to abstain (SQuAD 2.0-style data): decoding then allows "no
        answer" by default. Its card's "no_answer" section, a hub card listing squad_v2, or the config's
        rcqa_no_answer say so."""
        return bool(self.card.get("no_answer")) or bool(getattr(self.config, "rcqa_no_answer", False))

    @property
    def null_threshold(self) -> float:
        """The card's threshold on null score − best span score (run_squad's null_score_diff_threshold), else 0."""
        section = self.card.get("no_answer")
        return float(section.get("threshold", 0.0)) if isinstance(section, dict) else 0.0

    @property
    def architecture(self) -> str:
        return type(self.model).__name__

    @property
    def num_layers(self) -> int:
        """Block calls, as the adapter finds them: an encoder-decoder's encoder and decoder blocks together."""
        return self.adapter.num_layers

    @cached_property
    def adapter(self) -> ModelAdapter:
        """How rcqa cuts this model at its layers (rcqa.adapter), found with a short question and passage."""
        probe = self.tokenizer("Who wrote it?", "The report was written by the committee.", return_tensors="pt")
        inputs = {k: probe[k].to(self.device) for k in self.tokenizer.model_input_names if k in probe}
        return adapter_of(self.model, inputs)

    @property
    def null_token(self) -> int | None:
        """Where "no answer" is read: the first token, where it is the tokenizer's [CLS]-like special token and it
        reads the input (not so in a causal, decoder-only model); None where the model has no such token."""
        ids = self.tokenizer("Who?", "It.")["input_ids"]
        first_is_special = ids[0] in (self.tokenizer.cls_token_id, self.tokenizer.bos_token_id) and ids[0] is not None
        return 0 if first_is_special and self.adapter.first_token_reads_input else None

    @property
    def null_refusal(self) -> str | None:
        """Why this model cannot say "no answer", in one sentence; None where it can."""
        if self.null_token is not None:
            return None
        return (f"{self.architecture} has no [CLS]-style first token that reads the passage, so it cannot say "
                "\"no answer\": explain a span of the passage instead")

    @property
    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    @cached_property
    def weight_bytes(self) -> int:
        """The memory its weights hold: every parameter at its dtype's size (what load_model's memo counts against
        $RCQA_MODELS_MB; the buffers, position ids and the like, are a few kB)."""
        return sum(parameter.numel() * parameter.element_size() for parameter in self.model.parameters())

    @cached_property
    def fingerprint(self) -> str:
        """A stable hash of the config and every weight: equal fingerprints mean equal answers. The folder the model
        was read from (the config's _name_or_path) is left out: the same model in another checkout is the same. The
        card's no-answer rule decides answers too, so it counts where the card has one (and a card without one
        leaves the fingerprint as it was)."""
        config = {k: v for k, v in self.config.to_dict().items() if k != "_name_or_path"}
        digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode())
        if self.card.get("no_answer"):
            digest.update(json.dumps({"no_answer": self.card["no_answer"]}, sort_keys=True, default=str).encode())
        for key, tensor in sorted(self.model.state_dict().items()):
            digest.update(key.encode())
            digest.update(tensor.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
        return digest.hexdigest()[:16]


class SharedTokenizer:
    """A fast tokenizer that threads can share. Each encoding call first sets the Rust backend's truncation and
    padding (a max length, a stride, or none) and then encodes with whatever is set, so another thread's call in
    between would encode one text with the other's settings: the calls that encode hold a lock."""

    def __init__(self, tokenizer):
        self.__dict__["wrapped"] = tokenizer
        self.__dict__["_lock"] = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    def __len__(self) -> int:
        return len(self.wrapped)

    def __call__(self, *args, **kwargs):
        with self._lock:
            return self.wrapped(*args, **kwargs)

    def tokenize(self, *args, **kwargs) -> list[str]:
        with self._lock:
            return self.wrapped.tokenize(*args, **kwargs)

    def encode(self, *args, **kwargs) -> list[int]:
        with self._lock:
            return self.wrapped.encode(*args, **kwargs)
