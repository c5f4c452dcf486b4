"""A run's many small shards are merged into one (rcqa.dataset.store.compact): every row kept once, in the order
written, whatever a killed compaction left behind, and a finished run leaves one shard."""
import json
import os
import shutil

import pyarrow.parquet as pq

from rcqa.cli import main
from rcqa.dataset import store
from rcqa.gallery import gallery_example
from tests.helpers.squad_files import squad_json

PASSAGE = "The lighthouse on Corran Point was designed by the engineer Margaret Ellison. " * 20


def written(folder, rows_by_shard: list[list[dict]]) -> list:
    """Shards written in this order, each dated a second after the one before (the order compact keeps)."""
    (folder / store.SHARDS).mkdir(parents=True, exist_ok=True)
    shards = []
    for i, rows in enumerate(rows_by_shard):
        shard = store.write_shard(folder, rows)
        moment = 10**18 + i * 10**9
        os.utime(shard, ns=(moment, moment))
        shards.append(shard)
    return shards


def rows(i: int) -> list[dict]:
    return [{"id": f"q{i}-{j}", "passage": PASSAGE, "question": f"question {i} {j}", "f1": j / 8,
             "category_answer": [float(i), float(j)]} for j in range(8)]


def all_rows(folder) -> list[dict]:
    return [row for shard in sorted((folder / store.SHARDS).glob("*.parquet"), key=lambda p: p.stat().st_mtime_ns)
            for row in pq.read_table(shard).to_pylist()]


def test_many_shards_become_one_holding_every_row_once_in_the_order_written(tmp_path):
    written(tmp_path, [rows(i) for i in range(12)] + [[rows(3)[5]]])  # the last repeats a row of the fourth
    before = all_rows(tmp_path)
    size_before = sum(p.stat().st_size for p in (tmp_path / store.SHARDS).glob("*.parquet"))

    merged = store.compact(tmp_path, fewest=4)

    assert list((tmp_path / store.SHARDS).glob("*.parquet")) == [merged]
    assert all_rows(tmp_path) == before[:-1]  # the repeat of q3-5 dropped, the rest as written and in order
    assert store.finished_ids(tmp_path) == {f"q{i}-{j}" for i in range(12) for j in range(8)}
    metadata = pq.ParquetFile(merged).metadata
    assert metadata.row_group(0).column(0).compression == "ZSTD"
    assert merged.stat().st_size < size_before / 3  # one footer and one copy of the repeated passage's pages


def test_a_later_sitting_merges_only_its_own_shards_and_leaves_the_earlier_merge_byte_for_byte(tmp_path):
    written(tmp_path, [rows(i) for i in range(4)])
    first = store.compact(tmp_path, fewest=2)
    first_bytes = first.read_bytes()
    later = written(tmp_path, [rows(i) for i in range(4, 7)])
    for i, shard in enumerate(later):  # dated after the first merge, as a later sitting's are
        moment = first.stat().st_mtime_ns + (i + 1) * 10**9
        os.utime(shard, ns=(moment, moment))

    second = store.compact(tmp_path, fewest=2)

    assert sorted((tmp_path / store.SHARDS).glob("*.parquet")) == sorted([first, second])
    assert first.read_bytes() == first_bytes  # committed once, never rewritten
    assert [row["id"] for row in pq.read_table(second).to_pylist()] == [f"q{i}-{j}" for i in range(4, 7)
                                                                       for j in range(8)]
    assert store.finished_ids(tmp_path) == {f"q{i}-{j}" for i in range(7) for j in range(8)}
    assert store.compact(tmp_path, fewest=1) is None  # nothing written since: nothing to merge


def test_a_run_of_fewer_shards_than_asked_is_left_as_it_is(tmp_path):
    shards = written(tmp_path, [rows(0), rows(1), rows(2)])
    stamps = [shard.stat().st_mtime_ns for shard in shards]
    assert store.compact(tmp_path, fewest=4) is None
    assert [shard.stat().st_mtime_ns for shard in shards] == stamps


def test_shards_written_before_a_column_existed_merge_with_it_empty(tmp_path):
    older = [{"id": "old", "question": "asked before the passage was kept"}]
    written(tmp_path, [older, rows(0)])
    store.compact(tmp_path, fewest=2)
    merged = {row["id"]: row for row in all_rows(tmp_path)}
    assert merged["old"]["passage"] is None and merged["q0-0"]["passage"] == PASSAGE


def test_a_compaction_killed_before_it_removed_the_shards_leaves_each_row_once(tmp_path):
    written(tmp_path, [rows(i) for i in range(4)])
    copy = tmp_path.parent / "copy"
    shutil.copytree(tmp_path / store.SHARDS, copy)
    store.compact(tmp_path, fewest=2)
    for shard in copy.iterdir():  # the shards the killed compaction had not yet removed
        shutil.copy2(shard, tmp_path / store.SHARDS / shard.name)
    assert store.repeated_rows(tmp_path) == 32
    assert store.finished_ids(tmp_path) == {f"q{i}-{j}" for i in range(4) for j in range(8)}
    assert store.repeated_rows(tmp_path) == 0
    assert sorted(row["id"] for row in all_rows(tmp_path)) == sorted(f"q{i}-{j}" for i in range(4) for j in range(8))


def test_a_finished_sitting_leaves_one_shard_that_a_resume_reads_as_done(tmp_path, tiny_model_dirs, monkeypatch,
                                                                       one_torch_thread):
    examples = [gallery_example(name) for name in ("lighthouse-who", "orchard-how-many")]
    data = tmp_path / "data.json"
    data.write_text(json.dumps(squad_json(examples)))
    out = tmp_path / "run"
    command = ["reproduce", "--data", str(data), "--out", str(out), "--model", tiny_model_dirs["bert"],
               "--tolerance", "0", "--workers", "1"]
    monkeypatch.setattr(store, "COMPACT_FROM", 1)  # however the two examples were chunked
    assert main(command) == 0
    [shard] = (out / store.SHARDS).glob("*.parquet")
    assert pq.ParquetFile(shard).metadata.row_group(0).column(0).compression == "ZSTD"
    assert main(command) == 0
    assert json.loads((out / store.MANIFEST).read_text())["runs"][-1]["computed"] == 0
    assert sorted(pq.read_table(out / store.SHARDS).column("id").to_pylist()) == sorted(e.id for e in examples)
