"""A run whose rows repeat an id (the twin bug: a question asked twice in the data got its twin's row and id) is
mended by resuming it, whether the repeated rows sit in two shards or in one: the committed runs held both kinds,
twins explained in one chunk having written both rows into one shard."""
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from rcqa.cli import main
from rcqa.dataset import store
from rcqa.gallery import gallery_example
from rcqa.types import Example
from tests.helpers.squad_files import squad_json


@pytest.fixture(autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def differing(actual, expected, at: str = "") -> list[str]:
    """Where two rows differ but for float noise, through nested dicts and lists (a kept explanation's scores are
    float32): the paths of the differing values."""
    if isinstance(expected, dict) and isinstance(actual, dict) and actual.keys() == expected.keys():
        return [d for k in expected if k != "seconds" for d in differing(actual[k], expected[k], f"{at}/{k}")]
    if isinstance(expected, list) and isinstance(actual, list) and len(actual) == len(expected):
        return [d for i, (a, e) in enumerate(zip(actual, expected)) for d in differing(a, e, f"{at}/{i}")]
    if isinstance(expected, float) and isinstance(actual, float):
        return [] if actual == pytest.approx(expected, rel=1e-5, abs=2e-6, nan_ok=True) else [at]
    return [] if actual == expected else [at]


def shard_ids(folder: Path) -> list[list[str]]:
    """Each shard's ids in its row order, shards in name order."""
    return [pq.read_table(shard, columns=["id"]).column("id").to_pylist()
            for shard in sorted((folder / "shards").glob("*.parquet"))]


def test_a_shard_that_holds_an_id_twice_keeps_its_first_row_and_its_other_rows(tmp_path):
    (tmp_path / "shards").mkdir()
    store.write_shard(tmp_path, [{"id": "a", "question": "first"}, {"id": "b"}, {"id": "a", "question": "again"},
                                 {"id": "c"}])
    assert store.repeated_rows(tmp_path) == 1
    assert store.finished_ids(tmp_path) == {"a", "b", "c"}
    assert shard_ids(tmp_path) == [["a", "b", "c"]]
    [shard] = (tmp_path / "shards").glob("*.parquet")
    assert pq.read_table(shard).column("question").to_pylist() == ["first", None, None]
    assert store.repeated_rows(tmp_path) == 0


def test_an_id_repeated_within_and_across_shards_is_kept_once_and_a_shard_left_empty_goes(tmp_path):
    (tmp_path / "shards").mkdir()
    first = store.write_shard(tmp_path, [{"id": "a"}, {"id": "a"}, {"id": "b"}])
    second = store.write_shard(tmp_path, [{"id": "b"}, {"id": "a"}])
    later = first.stat().st_mtime_ns + 10**9  # finished_ids reads shards in the order they were written
    os.utime(second, ns=(later, later))
    assert store.repeated_rows(tmp_path) == 3
    assert store.finished_ids(tmp_path) == {"a", "b"}
    assert not second.exists()
    assert pq.read_table(first, columns=["id"]).column("id").to_pylist() == ["a", "b"]
    assert store.repeated_rows(tmp_path) == 0


def test_a_run_whose_twins_shared_one_shard_is_mended_when_resumed(tmp_path, tiny_model_dirs):
    """As the committed runs held them: the twins explained in one chunk, both rows under the first's id in one
    shard beside another question's row. Resumed, the repeat is dropped, the twin scored under its own id (the row
    it got from a whole run, but for its wall time), and the other question's row left as it was."""
    first = gallery_example("lighthouse-who")
    twin = Example(id="twin", passage=first.passage, question=first.question, title="another title")
    other = gallery_example("orchard-how-many")
    data = tmp_path / "twins.json"
    data.write_text(json.dumps(squad_json([first, twin, other])))
    out = tmp_path / "run"
    command = ["reproduce", "--data", str(data), "--out", str(out), "--model", tiny_model_dirs["bert"],
               "--tolerance", "0", "--workers", "1"]
    assert main(command) == 0
    rows = {row["id"]: row for row in pq.read_table(out / "shards").to_pylist()}
    assert set(rows) == {first.id, "twin", other.id}
    for shard in (out / "shards").glob("*.parquet"):
        shard.unlink()
    store.write_shard(out, [rows[first.id], rows[other.id], rows[first.id]])  # the old code's one chunk
    assert store.repeated_rows(out) == 1
    assert main(command) == 0
    assert store.repeated_rows(out) == 0
    mended = {row["id"]: row for row in pq.read_table(out / "shards").to_pylist()}
    assert sorted(mended) == sorted([first.id, "twin", other.id])
    assert len(pq.read_table(out / "shards")) == 3
    assert mended[other.id] == rows[other.id]
    # read from the kept explanation (scores kept as float32), so equal to float noise; "seconds" is wall time
    assert differing(mended["twin"], rows["twin"]) == []
    assert json.loads((out / "manifest.json").read_text())["counts"] == {"total": 3, "done": 3, "failed": 0}
