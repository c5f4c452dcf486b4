"""A disk cache of Attributions keyed by model fingerprint, example text and every setting.

Files are written atomically; a corrupt or partial file is treated as a miss and recomputed; the
folder is kept under a size cap by evicting the least recently used results.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

from rcqa.attribution.engine import LayerResult, explain
from rcqa.attribution.settings import IGSettings
from rcqa.model import QAModel
from rcqa.resources import cache_dir
from rcqa.types import Attribution, Example

FORMAT = 3  # bump when the stored layout or the engine's numbers change (2: Kronrod-refined panels; 3: words as
# written with their tags, the squared-L2 score)


class ResultCache:
    def __init__(self, folder: str | Path | None = None, max_mb: float | None = None):
        self.folder = Path(folder or os.environ.get("RCQA_RESULT_CACHE") or cache_dir() / "results")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.max_bytes = (max_mb or float(os.environ.get("RCQA_CACHE_MAX_MB", 1024))) * 2**20  # inf: never evict

    @staticmethod
    def key(fingerprint: str, example: Example, settings: IGSettings) -> str:
        identity = {"format": FORMAT, "model": fingerprint, "passage": example.passage,
                    "question": example.question, "settings": settings.to_dict(),
                    "gold": [[a.text, a.start_char] for a in example.answers] if settings.span == "gold" else None}
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.npz"

    def get(self, key: str) -> Attribution | None:
        path = self._path(key)
        try:
            result = Attribution.from_npz(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError):
            path.unlink(missing_ok=True)  # corrupt or partial: recompute
            return None
        os.utime(path)  # recently used
        return result

    def put(self, key: str, result: Attribution) -> None:
        partial = self._path(key).with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(result.to_npz(compact=True))
        partial.replace(self._path(key))
        if math.isfinite(self.max_bytes):
            self._evict()

    def _evict(self) -> None:
        entries = []
        for path in self.folder.glob("*.npz"):
            try:
                stat = path.stat()
            except FileNotFoundError:  # another process evicted it
                continue
            entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size


def cached_explain(qa_model: QAModel, example: Example, settings: IGSettings = IGSettings(),
                   cache: ResultCache | None = None,
                   on_layer: Callable[[LayerResult], None] | None = None) -> tuple[Attribution, bool]:
    """(result, came_from_cache): the engine's result for this model, example and settings."""
    cache = cache or ResultCache()
    key = cache.key(qa_model.fingerprint, example, settings)
    stored = cache.get(key)
    if stored is not None:
        return stored, True
    result = explain(qa_model, example, settings, on_layer=on_layer)
    cache.put(key, result)
    return result, False
