"""Reading a checkpoint: the embedded models, a local folder or a hub id (checked to be reachable first) into a
QAModel, with its card (rcqa_card.json, or a hub card that lists squad_v2) and the longest window its positions
allow; each refusal a ModelLoadError that says why and how to fix it."""
from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from urllib.parse import urlparse

import torch

from rcqa.catalog import hub_allowed, path_exists
from rcqa.model.qa_model import DEFAULT_WINDOW, ModelLoadError, QAModel, SharedTokenizer
from rcqa.resources import EMBEDDED_MODEL_DIRS


HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def load_checkpoint(name: str, device: torch.device) -> QAModel:
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    source, hub_options = resolve(name)
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
    card = read_card(Path(source)) if Path(source).is_dir() else {}
    window = {**DEFAULT_WINDOW, **card.get("window", {})}
    window["max_len"] = min(window["max_len"], _position_limit(model.config))
    return QAModel(name=name, model=model, tokenizer=SharedTokenizer(tokenizer), device=device, card=card, **window)


def resolve(name: str) -> tuple[str, dict]:
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


def read_card(folder: Path) -> dict:
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
