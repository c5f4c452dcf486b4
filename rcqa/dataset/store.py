"""A run's folder: Parquet shards of rows (shards/part-*.parquet as written, shards/sitting-*.parquet merged) and
manifest.json, both written atomically.

Which examples are done is read from the shards themselves, never from the manifest, so a run killed between a
shard and its manifest update loses nothing. A shard that cannot be read (a truncated file) is moved to corrupt/
and its examples count as not done."""
from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rcqa.attribution.cache import ResultCache
from rcqa.dataset.manifest import RunManifest
from rcqa.dataset.rows import SCHEMA

MANIFEST = "manifest.json"
SHARDS = "shards"
CORRUPT = "corrupt"
LOCK = ".writer.lock"  # held (flock) by the one process writing into the folder
RESULTS = "results"  # every explanation, as a result cache (rcqa.attribution.cache) that is never evicted
RUNS_ENV = "RCQA_RUNS"  # where a dashboard finds runs (rcqa.ui.runs)
COMPACT_FROM = 64  # shards of a run that the runner merges into one (a few cost nothing; a thousand triple its size)
MERGED = "sitting-"  # a merged shard's name begins so: compact leaves it as it is


class RunMismatch(ValueError):
    """The folder holds a run of another model, other settings or other data."""


class RunLocked(ValueError):
    """Another process is writing into the run folder."""


def run_folders() -> list[Path]:
    """The runs under $RCQA_RUNS, in its order, each once: run folders, or folders holding run folders."""
    roots = [Path(p) for p in os.environ.get(RUNS_ENV, "").split(os.pathsep) if p]
    found: list[Path] = []
    for root in roots:
        candidates = [root] if (root / MANIFEST).is_file() else sorted(root.glob("*")) if root.is_dir() else []
        found += [c.resolve() for c in candidates if (c / MANIFEST).is_file() and c.resolve() not in found]
    return found


@contextmanager
def writing(folder: Path) -> Iterator[None]:
    """Be the folder's only writer while inside: a second writer would delete the first one's temporary shards.
    The kernel drops the lock when its holder exits, so a killed run leaves no stale lock."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLocked(f"another run is writing into {folder}; wait for it to finish or give another "
                            "--out folder") from None
        yield


def open_run(folder: Path, fresh: RunManifest) -> RunManifest:
    """The manifest to continue: the folder's own if it is the same run (refused if not), else `fresh`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SHARDS).mkdir(exist_ok=True)
    path = folder / MANIFEST
    if not path.is_file():
        return fresh
    existing = RunManifest.load(path)
    old, new = existing.identity(), fresh.identity()
    for what in new:
        if old[what] != new[what]:
            raise RunMismatch(f"{folder} holds a run with another {what} ({_short(old[what])}, now "
                              f"{_short(new[what])}); give another --out folder")
    # a contrast run's questions without its foil are kept too (None where it skipped none)
    return dataclasses.replace(fresh, failed=existing.failed, runs=existing.runs, skipped=existing.skipped)


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def write_manifest(folder: Path, manifest: RunManifest) -> None:
    write_atomically(folder / MANIFEST, lambda temporary: temporary.write_text(manifest.to_json()))


def read_manifest(folder: Path) -> RunManifest:
    """The folder's manifest; FileNotFoundError, in one sentence, for a folder that is no run's."""
    path = folder / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{folder} holds no {MANIFEST}: not a run folder")
    return RunManifest.load(path)


def finished_ids(folder: Path) -> set[str]:
    """Ids of every row in the readable shards, each once. Unreadable shards move to corrupt/; leftover temporary
    files of a killed run are deleted; a row whose id an earlier row holds, in an earlier shard or earlier in its
    own, is dropped (before kept results were given back as their own question's, a question asked twice in the
    data got its twin's row and id, so the run never counted it done: resumed, it is scored again). Twins explained
    in one chunk wrote both rows into one shard, so a shard is checked against itself too."""
    shards = folder / SHARDS
    for leftover in shards.glob(".*.tmp"):
        leftover.unlink()
    ids: set[str] = set()
    for shard in _in_written_order(folder):
        if (found := _shard_ids(shard)) is None:
            (folder / CORRUPT).mkdir(exist_ok=True)
            shard.replace(folder / CORRUPT / shard.name)
            continue
        keep = []
        for i in found:
            keep.append(i not in ids)
            ids.add(i)
        if not all(keep):
            _keep_rows(shard, keep)
    return ids


def repeated_rows(folder: Path) -> int:
    """How many rows of the readable shards hold an id another row holds: the twin bug's (finished_ids), which
    reading leaves as it is."""
    ids = [i for shard in (folder / SHARDS).glob("*.parquet") for i in _shard_ids(shard) or ()]
    return len(ids) - len(set(ids))


def _shard_ids(shard: Path) -> list[str] | None:
    """The ids of a shard's rows; None where it cannot be read (a truncated file)."""
    try:
        return pq.read_table(shard, columns=["id"]).column("id").to_pylist()
    except (OSError, pa.ArrowException):
        return None


def _keep_rows(shard: Path, keep: list[bool]) -> None:
    """The shard with only the rows `keep` marks, in its order (deleted where none is left)."""
    table = pq.read_table(shard)
    kept = table.filter(pa.array(keep, type=pa.bool_()))
    if kept.num_rows:
        write_atomically(shard, lambda temporary: pq.write_table(kept, temporary))
    else:
        shard.unlink()


def results(folder: Path, read_only: bool = False) -> ResultCache:
    """The run's explanations, by result-cache key (read_only for a run others only read, as the dashboard)."""
    return ResultCache(folder / RESULTS, max_mb=float("inf"), read_only=read_only)


def write_shard(folder: Path, rows: list[dict]) -> Path:
    """Write rows as a new shard; it appears under its final name only once complete."""
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    target = folder / SHARDS / f"part-{uuid.uuid4().hex}.parquet"
    write_atomically(target, lambda temporary: pq.write_table(table, temporary))
    return target


def _in_written_order(folder: Path) -> list[Path]:
    """The run's shards, oldest first (a tie broken by name)."""
    return sorted((folder / SHARDS).glob("*.parquet"), key=lambda path: (path.stat().st_mtime_ns, path.name))


def compact(folder: Path, fewest: int | None = None) -> Path | None:
    """Merge the shards written since the last merge into one where there are at least `fewest` (default
    COMPACT_FROM), in the order they were written (the data's order, near enough, so a passage's questions sit
    together and compress as one), zstd-compressed; returns the merged shard, or None where there were fewer (or
    none). A run of 10,570 questions is 1,322 shards of 8 rows, about 95 MB; merged, about 29 MB, light enough to
    commit. An earlier sitting's merged shard is left byte for byte as it is, so a run made over several sittings and
    committed after each one adds each row to the repository's history once. The merged shard is written before the
    others go, so a killed compaction leaves every row readable, at worst twice, and the next read keeps each id's
    row once (finished_ids)."""
    finished_ids(folder)  # drops repeated rows and moves unreadable shards aside first
    shards = [shard for shard in _in_written_order(folder) if not shard.name.startswith(MERGED)]
    if not shards or len(shards) < (COMPACT_FROM if fewest is None else fewest):
        return None
    table = pa.concat_tables([pq.read_table(shard) for shard in shards], promote_options="default")
    merged = folder / SHARDS / f"{MERGED}{uuid.uuid4().hex}.parquet"
    write_atomically(merged, lambda temporary: pq.write_table(table, temporary, compression="zstd",
                                                               compression_level=9))
    for shard in shards:
        shard.unlink()
    return merged


def write_atomically(target: Path, write) -> None:
    """write(temporary) then move it onto target, so a reader never sees a half-written file."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    write(temporary)
    temporary.replace(target)
