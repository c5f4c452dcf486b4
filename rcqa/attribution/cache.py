"""A disk cache of Attributions keyed by model fingerprint, example text and every setting.

Files are written atomically; a corrupt or partial file is treated as a miss and recomputed; the
folder is kept under a size cap by evicting the least recently used results.
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import os
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rcqa.attribution.engine import LayerResult, explain
from rcqa.attribution.settings import IGSettings
from rcqa.model import QAModel
from rcqa.resources import cache_dir
from rcqa.types import AGGREGATIONS, Attribution, Example

LOG = logging.getLogger(__name__)
STALE_PART_SECONDS = 3600  # a .part file this old is a crashed writer's, never one still being written
FORMAT = 3  # bump when the stored layout or the engine's numbers change (2: Kronrod-refined panels; 3: words as
# written with their tags, the squared-L2 score)


# l2_squared is l2², rebuilt on reading; the rest are kept as float32 where they fit (dataset runs keep thousands of
# results, and float64 doubled their size for digits beyond the engine's float32 arithmetic)
STORED_AGGREGATIONS = tuple(name for name in AGGREGATIONS if name != "l2_squared")


def stored_scores(scores: np.ndarray) -> np.ndarray:
    """(targets, STORED_AGGREGATIONS, layers, tokens): float32, or float64 where a value would overflow float32 (a
    path that leaves the model's range, e.g. a zero baseline under LayerNorm, reaches 1e24 and more)."""
    kept = scores[:, [AGGREGATIONS.index(name) for name in STORED_AGGREGATIONS]]
    return kept.astype(np.float32) if np.all(np.abs(kept) <= np.finfo(np.float32).max) else kept


def full_scores(stored: np.ndarray, aggregations: Sequence[str]) -> np.ndarray:
    """Every aggregation of AGGREGATIONS, in float64, from the ones a file holds (older files hold them all)."""
    scores = np.empty((stored.shape[0], len(AGGREGATIONS), *stored.shape[2:]), dtype=np.float64)
    for index, name in enumerate(aggregations):
        scores[:, AGGREGATIONS.index(name)] = stored[:, index]
    if "l2_squared" not in aggregations:
        scores[:, AGGREGATIONS.index("l2_squared")] = scores[:, AGGREGATIONS.index("l2")] ** 2
    return scores


class ResultCache:
    """read_only: results are read and never written, touched or deleted (a committed run's cache)."""

    def __init__(self, folder: str | Path | None = None, max_mb: float | None = None, read_only: bool = False):
        self.folder = Path(folder or os.environ.get("RCQA_RESULT_CACHE") or cache_dir() / "results")
        self.read_only = read_only
        self.max_bytes = (max_mb or float(os.environ.get("RCQA_CACHE_MAX_MB", 1024))) * 2**20  # inf: never evict
        if not read_only:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._sweep_partials()

    def _sweep_partials(self) -> None:
        cutoff = time.time() - STALE_PART_SECONDS
        for partial in self.folder.glob("*.part"):
            try:
                if partial.stat().st_mtime < cutoff:
                    partial.unlink()
            except OSError:  # another process swept it, or it is not ours to delete
                continue

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
            with np.load(path, allow_pickle=False) as stored:
                data = json.loads(stored["meta"].tobytes().decode())
                data["scores"] = full_scores(stored["scores"], data.pop("stored_aggregations", AGGREGATIONS))
                if "hidden_states" in stored:
                    data["hidden_states"] = stored["hidden_states"]
            result = Attribution.from_dict(data)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError):
            if not self.read_only:
                self._discard(path)  # corrupt or partial: recompute
            return None
        if not self.read_only:
            try:
                os.utime(path)  # recently used
            except OSError:  # evicted by another process meanwhile, or a folder we may not write
                pass
        return result

    @staticmethod
    def _discard(path: Path) -> None:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass

    def put(self, key: str, result: Attribution) -> None:
        if self.read_only:
            raise PermissionError(f"{self.folder} is a read-only result cache")
        meta = {**result.to_dict(), "stored_aggregations": list(STORED_AGGREGATIONS)}
        del meta["scores"]
        arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                  "scores": stored_scores(result.scores)}
        if result.hidden_states is not None:
            arrays["hidden_states"] = result.hidden_states
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)  # the words' JSON shrinks fivefold; runs keep thousands
        partial = self._path(key).with_suffix(f".{os.getpid()}.part")
        try:
            partial.write_bytes(buffer.getvalue())
            partial.replace(self._path(key))
        except OSError:
            self._discard(partial)  # a full disk leaves no half-written file behind
            raise
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
    if not cache.read_only:
        try:
            cache.put(key, result)
        except OSError as error:  # a full disk or a folder we may not write: the result is still the result
            LOG.warning("could not keep the result in %s: %s", cache.folder, error)
    return result, False
