"""Load any extractive-QA checkpoint (the embedded default, a local folder, or a hub id) once per process."""
from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import urlparse

import torch

from rcqa.adapter.discovery import adapter_of
from rcqa.adapter.model_adapter import ModelAdapter
from rcqa.catalog import DEFAULT_MODEL, canonical, hub_allowed, may_load, path_exists
from rcqa.resources import EMBEDDED_MODEL_DIRS

if TYPE_CHECKING:
    from transformers import PreTrainedModel

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


class _Window(TypedDict):
    """How a model reads a long passage: QAModel's window fields."""
    max_len: int
    doc_stride: int
    max_query_len: int


_DEFAULT_WINDOW: _Window = {"max_len": 384, "doc_stride": 128, "max_query_len": 64}


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


def pick_device(requested: str | None = None) -> torch.device:
    """The argument, else $RCQA_DEVICE, else CUDA when present, else the CPU."""
    choice = requested or os.environ.get("RCQA_DEVICE")
    if choice:
        device = torch.device(choice)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ModelLoadError(f"device {choice!r} was asked for but CUDA is not available here")
        return device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


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


MODELS_MB_ENV = "RCQA_MODELS_MB"
# the weights a process keeps loaded (the server, and each worker process): 11 models of the default's 86 MB, or one
# of BERT-large's 1.3 GB alone. Past it the least recently used are dropped; the one just asked for always stays
MODELS_MB = 1024
_loaded: OrderedDict[tuple[str, str], QAModel] = OrderedDict()
_lock = threading.Lock()


def models_budget_bytes() -> float:
    """The bytes of weights a process keeps loaded: $RCQA_MODELS_MB (MB, a fraction allowed), else MODELS_MB."""
    text = os.environ.get(MODELS_MB_ENV, "").strip() or str(MODELS_MB)
    try:
        megabytes = float(text)
    except ValueError:
        raise ModelLoadError(f"${MODELS_MB_ENV} must be a number of MB, not {text[:20]!r}") from None
    return megabytes * 2**20


def _drop_least_recent(budget: float) -> None:
    """Drop the least recently used models until the rest hold at most `budget` bytes of weights, keeping the most
    recent one whatever it weighs. A count bound let four large models (5 GB for BERT-large) stay in each process."""
    while len(_loaded) > 1 and sum(qa_model.weight_bytes for qa_model in _loaded.values()) > budget:
        _loaded.popitem(last=False)


def load_model(name: str = DEFAULT_MODEL, device: str | None = None, fingerprint: str | None = None) -> QAModel:
    """Load (once per process) the default model, a local folder or a hub id, in eval mode. In public mode only the
    catalog's models load (rcqa.catalog), and the refusal names nothing the visitor did not already know.

    A process that computes for another one (the app's worker processes, Dask's workers) passes the fingerprint
    of the model the other one loaded by this name: a different model (changed on disk since, or another machine's
    copy) is refused with ModelLoadError, so that no result is computed with one model and shown as another's."""
    try:
        name = canonical(name)
    except ValueError as error:  # a name too long to be a model's
        raise ModelLoadError(str(error)) from None
    if not may_load(name):
        raise ModelLoadError("this server offers only the models on its Model page")
    target = pick_device(device)
    key = (name, str(target))
    with _lock:
        if key not in _loaded:
            _loaded[key] = _load(name, target)
        _loaded.move_to_end(key)
        _drop_least_recent(models_budget_bytes())
        qa_model = _loaded[key]
    if fingerprint is not None and qa_model.fingerprint != fingerprint:
        raise ModelLoadError(f"{name!r} is not the model it was asked for: its fingerprint is {qa_model.fingerprint}, "
                             f"not {fingerprint} (it has changed on disk since it was loaded first); reload the app "
                             "or start the run again")
    return qa_model


def as_model(model_or_name: str | QAModel, device: str | None = None) -> QAModel:
    """A loaded model as it is, or the model of that name (load_model): what the Python API accepts."""
    if isinstance(model_or_name, QAModel):
        return model_or_name
    if isinstance(model_or_name, str):
        return load_model(model_or_name, device)
    raise TypeError(f"give a model name ('default', a folder or a hub id) or a loaded model (rcqa.load_model), "
                    f"not {type(model_or_name).__name__}")


def _load(name: str, device: torch.device) -> QAModel:
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    source, hub_options = _resolve(name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=False, **hub_options)
        model, info = AutoModelForQuestionAnswering.from_pretrained(
            source, trust_remote_code=False, use_safetensors=True, dtype=torch.float32,
            output_loading_info=True, **hub_options,
        )
    except ModelLoadError:
        raise
    except (OSError, ValueError, KeyError) as error:
        raise ModelLoadError(f"cannot load {name!r} as an extractive-QA model: {_reason(error)}") from None
    if info.get("missing_keys"):
        raise ModelLoadError(
            f"{name!r} is not an extractive-QA checkpoint: it has no trained QA head "
            f"(missing {', '.join(sorted(info['missing_keys'])[:3])})"
        )
    if not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(f"{name!r} has no fast tokenizer, which answers need for character offsets")
    model.to(device).eval().requires_grad_(False)  # inference only: attribution needs input gradients alone
    card = _read_card(Path(source)) if Path(source).is_dir() else {}
    window = {**_DEFAULT_WINDOW, **card.get("window", {})}
    window["max_len"] = min(window["max_len"], _position_limit(model.config))
    return QAModel(name=name, model=model, tokenizer=SharedTokenizer(tokenizer), device=device, card=card, **window)


def _resolve(name: str) -> tuple[str, dict]:
    """A folder path, or a hub id checked to be reachable before transformers is let loose on it."""
    if name in EMBEDDED_MODEL_DIRS:
        folder = EMBEDDED_MODEL_DIRS[name]
        if not (folder / "config.json").is_file():
            raise ModelLoadError(f"the embedded model {name!r} is missing from {folder}; reinstall rcqa, or train "
                                 "and export it again (docs/model.md)")
        return str(folder), {}
    path = Path(name).expanduser()
    if path_exists(path):
        if not (path / "config.json").is_file():
            raise ModelLoadError(f"{path} is not a model folder (it has no config.json)")
        return str(path), {}
    if not HUB_ID.match(name) or name.startswith((".", "/", "~")):
        raise ModelLoadError(f"{name!r} is neither a local folder nor a hub id like 'org/model'")
    return name, _hub_options(name)


def _hub_options(hub_id: str) -> dict:
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or not hub_allowed():
        return {"local_files_only": True}
    if not _endpoint_reachable(constants.ENDPOINT):
        raise ModelLoadError(
            f"cannot reach the model hub at {constants.ENDPOINT} to fetch {hub_id!r}. Give a local folder "
            "that holds the checkpoint instead, or run where the hub can be reached."
        )
    return {}


def _endpoint_reachable(url: str, timeout: float = 3.0) -> bool:
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname, port), timeout=timeout):
            return True
    except OSError:
        return False


def _reason(error: Exception) -> str:
    """Why loading failed, in one line: the fix for an offline miss, else the error's first line."""
    text = str(error).strip().splitlines()
    if "local_files_only" in str(error) or "offline" in str(error).lower():
        return ("it is not in the local cache and hub access is off (set RCQA_HUB=1 to allow downloads); "
                "give a local folder")
    return text[0] if text else type(error).__name__


def _read_card(folder: Path) -> dict:
    path = folder / "rcqa_card.json"
    try:
        card = json.loads(path.read_text()) if path.is_file() else {}
    except json.JSONDecodeError:
        card = {}
    if not isinstance(card, dict):
        card = {}
    if "no_answer" not in card and _hub_card_lists_squad_v2(folder / "README.md"):
        card["no_answer"] = {"source": "README.md lists squad_v2 among its datasets"}
    return card


_SQUAD_V2 = re.compile(r"^\s*(datasets:\s*\[?.*|-\s*)\bsquad_?v2\b", re.MULTILINE | re.IGNORECASE)


def _hub_card_lists_squad_v2(path: Path) -> bool:
    """Whether a hub model card's YAML front matter names squad_v2 as a training dataset."""
    if not path.is_file():
        return False
    text = path.read_text(errors="replace")[:20_000]
    if not text.startswith("---"):
        return False
    front = text[3:text.find("\n---", 3)] if "\n---" in text[3:] else ""
    return bool(_SQUAD_V2.search(front))


def _position_limit(config) -> int:
    """The longest window the model's positions allow; 512 for one with no limit (XLNet's relative positions say
    -1)."""
    limit = int(getattr(config, "max_position_embeddings", 512))
    if limit <= 0:
        return 512
    return limit - 2 if config.model_type in ("roberta", "xlm-roberta", "camembert") else limit


BERT_BASE = {"layers": 12, "hidden": 768, "heads": 12}


def random_bert(device: str | None = None, layers: int = BERT_BASE["layers"], hidden: int = BERT_BASE["hidden"],
                heads: int = BERT_BASE["heads"]) -> QAModel:
    """A randomly initialised BERT QA model for timing, BERT-base by default (12 layers, 768 hidden, 12 heads; the
    feed-forward 4 × hidden wide, as BERT's); it reads with the default model's uncased WordPiece tokenizer, which
    has BERT-base's vocabulary. Seeded: the same shape gives the same weights."""
    from transformers import AutoTokenizer, BertConfig, BertForQuestionAnswering

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(_resolve(DEFAULT_MODEL)[0])
    model = BertForQuestionAnswering(BertConfig(vocab_size=len(tokenizer), num_hidden_layers=layers,
                                                hidden_size=hidden, num_attention_heads=heads,
                                                intermediate_size=4 * hidden))
    target = pick_device(device)
    # transformers wraps PreTrainedModel.to in a decorator whose declared type takes the model as its argument
    model.to(target).eval().requires_grad_(False)  # type: ignore[arg-type]
    shape = {"layers": layers, "hidden": hidden, "heads": heads}
    name = "random-bert-base" if shape == BERT_BASE else f"random-bert-L{layers}-H{hidden}-A{heads}"
    return QAModel(name=name, model=model, tokenizer=SharedTokenizer(tokenizer), device=target, **_DEFAULT_WINDOW)
