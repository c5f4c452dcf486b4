"""A disk cache of Attributions keyed by model fingerprint, example text and every setting.

Files are written atomically; a corrupt or partial file is treated as a miss and recomputed; the
folder is kept under a size cap by evicting the least recently used results. The cache names its files
`rcqa-result-<key>.npz` and evicts, deletes or sweeps nothing else, so a folder of one's own saved results can be
the cache; results written before that name (`<key>.npz`) are still read, and left alone.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rcqa.attribution.engine import LayerResult
from rcqa.attribution.passage import WindowProgress
from rcqa.attribution.explanation import explain
from rcqa.attribution.layerwise import layerwise_method
from rcqa.types.settings import ExplainSettings
from rcqa.model import QAModel
from rcqa.qa import Reading
from rcqa.resources import cache_dir
from rcqa.types import Attribution, Example

LOG = logging.getLogger(__name__)
PREFIX = "rcqa-result-"  # every file the cache writes, and the only ones it deletes
STALE_PART_SECONDS = 3600  # a .part file this old is a crashed writer's, never one still being written
# layer outputs larger than this are left out when a result is read: one window of BERT-large (25 × 384 × 1024
# float32) is 38 MB; only a whole passage's every window, as results kept before they kept one window's, is more
# (327 MB for 128 windows of the default model), and reading it took 7 s and 355 MB in the page that opened it
LARGEST_STATES_BYTES = 64 * 2**20
FORMAT = 3  # bump when the stored layout or the engine's numbers change (2: Kronrod-refined panels; 3: words as
# written with their tags, the squared-L2 score)


_UNREADABLE = (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError)


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
        for partial in self.folder.glob(f"{PREFIX}*.part"):
            try:
                if partial.stat().st_mtime < cutoff:
                    partial.unlink()
            except OSError:  # another process swept it, or it is not ours to delete
                continue

    def result_for(self, example: Example, key: str) -> Attribution | None:
        """The result kept under key, given back as this example's. The key holds the passage, the question and the
        settings, not the id, the title or (unless the explanation reads it) the gold answer, so a twin question
        (SQuAD v1.1 dev asks some twice, under two ids) finds the other's result: its numbers are this one's too,
        its example is not."""
        found = self.get(key)
        return None if found is None else replace(found, example=example)

    @staticmethod
    def key(fingerprint: str, example: Example, settings: ExplainSettings) -> str:
        """The key of the result for this model, example and settings; of the path's fields, it hashes those the
        method reads (the others at their defaults: rcqa.attribution.layerwise.LayerwiseMethod.cache_settings)."""
        keyed = layerwise_method(settings.method).cache_settings(settings)
        identity = {"format": FORMAT, "model": fingerprint, "passage": example.passage,
                    "question": example.question, "settings": keyed.to_dict(),
                    "gold": [[a.text, a.start_char] for a in example.answers] if settings.reads_gold else None}
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]

    def path_of(self, key: str) -> Path:
        """The file the result kept under `key` is, or would be, written to."""
        return self.folder / f"{PREFIX}{key}.npz"

    def files(self) -> list[Path]:
        """The results this cache wrote: the only files it evicts."""
        return list(self.folder.glob(f"{PREFIX}*.npz"))

    def get(self, key: str) -> Attribution | None:
        path = self.path_of(key)
        try:
            result = Attribution.from_npz(path, largest_states=LARGEST_STATES_BYTES)
        except FileNotFoundError:
            return self._written_before(key)
        except _UNREADABLE:
            if not self.read_only:
                self._discard(path)  # corrupt or partial: recompute
            return None
        if not self.read_only:
            try:
                os.utime(path)  # recently used
            except OSError:  # evicted by another process meanwhile, or a folder we may not write
                pass
        return result

    def _written_before(self, key: str) -> Attribution | None:
        """The result as the cache named it before its files had a prefix (committed run caches are such), read
        and never touched or deleted: a file of that name may be someone's own."""
        try:
            return Attribution.from_npz(self.folder / f"{key}.npz", largest_states=LARGEST_STATES_BYTES)
        except _UNREADABLE:  # FileNotFoundError included
            return None

    @staticmethod
    def _discard(path: Path) -> None:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass

    def put(self, key: str, result: Attribution) -> None:
        if self.read_only:
            raise PermissionError(f"{self.folder} is a read-only result cache")
        partial = self.path_of(key).with_suffix(f".{os.getpid()}.part")
        try:
            partial.write_bytes(result.to_npz(compact=True))
            partial.replace(self.path_of(key))
        except OSError:
            self._discard(partial)  # a full disk leaves no half-written file behind
            raise
        if math.isfinite(self.max_bytes):
            self._evict()

    def _evict(self) -> None:
        entries = []
        for path in self.files():
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


def cached_explain(qa_model: QAModel, example: Example, settings: ExplainSettings = ExplainSettings(),
                   cache: ResultCache | None = None,
                   on_layer: Callable[[LayerResult | WindowProgress], None] | None = None,
                   key: str | None = None, reading: Reading | None = None) -> tuple[Attribution, bool]:
    """(result, came_from_cache): the engine's result for this model, example and settings. `key`: their cache key
    (ResultCache.key) where the caller computed it already, else computed here; `reading`: as for explain. The
    cache is looked in all the same: a result another process kept since the caller looked is taken."""
    cache = cache or ResultCache()
    key = key or cache.key(qa_model.fingerprint, example, settings)
    stored = cache.result_for(example, key)
    if stored is not None:
        return stored, True
    result = explain(qa_model, example, settings, on_layer=on_layer, reading=reading)
    if not cache.read_only:
        try:
            cache.put(key, result)
        except OSError as error:  # a full disk or a folder we may not write: the result is still the result
            LOG.warning("could not keep the result in %s: %s", cache.folder, error)
    return result, False
