"""The result cache: hits, misses on any changed setting, corrupt files, size cap, and faults: files evicted by
another process, a full disk, crashed writers' partial files, read-only run caches."""
import errno
import json
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from rcqa.attribution.cache import PREFIX, ResultCache, cached_explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.model import load_model

SETTINGS = ExplainSettings(steps=4, tolerance=None)


def test_a_repeated_request_is_served_from_disk(tmp_path, tiny_model_dirs):
    qa_model, cache = load_model(tiny_model_dirs["bert"]), ResultCache(tmp_path)
    first, hit = cached_explain(qa_model, gallery_example("comet-who"), SETTINGS, cache)
    again, hit_again = cached_explain(qa_model, gallery_example("comet-who"), SETTINGS, ResultCache(tmp_path))
    assert (hit, hit_again) == (False, True)
    # the scores are kept as float32 (half a float64 file): equal to float32's rounding, 2^-24 relative (twice that
    # for l2_squared, rebuilt as l2²)
    assert np.allclose(again.scores, first.scores, rtol=2**-23, atol=0)
    assert not np.array_equal(again.scores, first.scores)  # rounded indeed: the check above is not vacuous
    assert np.array_equal(first.hidden_states, again.hidden_states)
    assert again.words == first.words and again.answer == first.answer
    l2, squared = (again.layer_scores(name) for name in ("l2", "l2_squared"))
    assert np.allclose(squared, l2**2, rtol=1e-12)


def test_scores_float32_cannot_hold_stay_float64_and_older_files_are_read_as_written(tmp_path, tiny_model_dirs):
    qa_model, cache = load_model(tiny_model_dirs["bert"]), ResultCache(tmp_path)
    result, _ = cached_explain(qa_model, gallery_example("comet-who"), SETTINGS, cache)
    huge = replace(result, scores=result.scores * 1e40)  # past float32's 3.4e38
    cache.put("huge", huge)
    assert np.array_equal(cache.get("huge").layer_scores("sum"), huge.layer_scores("sum"))
    meta = {k: v for k, v in result.to_dict().items() if k != "scores"}  # format 3 as first written: all float64
    np.savez_compressed(tmp_path / "older.npz", meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                        scores=result.scores)
    assert np.array_equal(cache.get("older").scores, result.scores)


def test_every_setting_and_the_text_are_part_of_the_key():
    example = gallery_example("comet-who")
    keys = {ResultCache.key("m1", example, SETTINGS), ResultCache.key("m2", example, SETTINGS),
            ResultCache.key("m1", example, ExplainSettings(steps=5, tolerance=None)),
            ResultCache.key("m1", example, ExplainSettings(steps=4, tolerance=None, baseline="zero")),
            ResultCache.key("m1", gallery_example("bakery-where"), SETTINGS)}
    assert len(keys) == 5


def test_a_corrupt_file_is_recomputed_not_a_crash(tmp_path, tiny_model_dirs):
    qa_model, cache = load_model(tiny_model_dirs["bert"]), ResultCache(tmp_path)
    example = gallery_example("river-where")
    cached_explain(qa_model, example, SETTINGS, cache)
    (stored,) = tmp_path.glob("*.npz")
    stored.write_bytes(stored.read_bytes()[:100])  # a partial write
    result, hit = cached_explain(qa_model, example, SETTINGS, cache)
    assert not hit and result.scores.shape[2] == qa_model.num_layers + 1
    stored.write_bytes(b"garbage")
    assert cached_explain(qa_model, example, SETTINGS, cache)[1] is False


def test_the_size_cap_evicts_the_least_recently_used(tmp_path, tiny_model_dirs):
    import os

    qa_model = load_model(tiny_model_dirs["bert"])
    cache = ResultCache(tmp_path)
    ids = ["comet-who", "bakery-where", "river-where"]
    for example_id in ids:
        cached_explain(qa_model, gallery_example(example_id), SETTINGS, cache)
        for path in tmp_path.glob("*.npz"):  # make the write order visible to mtime
            os.utime(path, (path.stat().st_mtime - 10, path.stat().st_mtime - 10))
    sizes = sorted(p.stat().st_size for p in tmp_path.glob("*.npz"))
    cache.max_bytes = sizes[-1] + sizes[-2] + 1
    cache.get(cache.key(qa_model.fingerprint, gallery_example("comet-who"), SETTINGS))  # touch the oldest
    cache._evict()
    remaining = {p.stem.removeprefix(PREFIX) for p in tmp_path.glob("*.npz")}
    assert len(remaining) == 2
    assert cache.key(qa_model.fingerprint, gallery_example("comet-who"), SETTINGS) in remaining
    assert cache.key(qa_model.fingerprint, gallery_example("bakery-where"), SETTINGS) not in remaining


def test_a_file_evicted_between_read_and_touch_is_still_a_hit(tmp_path, tiny_model_dirs, monkeypatch):
    qa_model, cache = load_model(tiny_model_dirs["bert"]), ResultCache(tmp_path)
    first, _ = cached_explain(qa_model, gallery_example("comet-who"), SETTINGS, cache)

    def evicted(path, *args, **kwargs):
        raise FileNotFoundError(errno.ENOENT, "evicted by another process", str(path))

    monkeypatch.setattr("rcqa.attribution.cache.os.utime", evicted)
    again, hit = cached_explain(qa_model, gallery_example("comet-who"), SETTINGS, cache)
    assert hit and again.answer == first.answer


def test_a_full_disk_still_returns_the_result_and_leaves_no_partial_file(tmp_path, tiny_model_dirs, monkeypatch):
    qa_model = load_model(tiny_model_dirs["bert"])
    written = []

    def full(path, data):
        written.append(path)
        Path.write_text(path, "half")  # what a disk that filled mid-write leaves
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    result, hit = cached_explain(qa_model, gallery_example("comet-who"), SETTINGS, ResultCache(tmp_path))
    assert not hit and result.answer.best is not None
    assert written and list(tmp_path.iterdir()) == []


def test_a_crashed_writers_partial_files_are_swept_once_stale(tmp_path):
    stale, fresh = tmp_path / f"{PREFIX}a.123.part", tmp_path / f"{PREFIX}b.456.part"
    for path in (stale, fresh):
        path.write_bytes(b"half a result")
    hours_ago = time.time() - 2 * 3600
    os.utime(stale, (hours_ago, hours_ago))
    ResultCache(tmp_path)
    assert not stale.exists() and fresh.exists()  # a fresh one may be another process's write in progress


def test_a_read_only_cache_never_writes_touches_or_deletes(tmp_path, tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    cached_explain(qa_model, gallery_example("comet-who"), SETTINGS, ResultCache(tmp_path))
    (stored,) = tmp_path.glob("*.npz")
    (tmp_path / f"{PREFIX}corrupt.npz").write_bytes(b"not a zip")
    long_ago = time.time() - 86_400
    os.utime(stored, (long_ago, long_ago))
    before = {p.name: p.stat().st_mtime for p in tmp_path.iterdir()}
    read_only = ResultCache(tmp_path, read_only=True)
    assert read_only.get(stored.stem.removeprefix(PREFIX)) is not None and read_only.get("corrupt") is None
    result, hit = cached_explain(qa_model, gallery_example("bakery-where"), SETTINGS, read_only)
    assert not hit and result.answer.best is not None
    assert {p.name: p.stat().st_mtime for p in tmp_path.iterdir()} == before
    assert ResultCache(tmp_path / "absent", read_only=True).get("anything") is None
    assert not (tmp_path / "absent").exists()


def test_a_folder_of_ones_own_results_is_no_loss_as_the_cache(tmp_path, tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    own = [tmp_path / "comet.npz", tmp_path / "0123456789abcdef0123456789abcdef.npz"]  # saved results of one's own
    result, _ = cached_explain(qa_model, gallery_example("comet-who"), SETTINGS, ResultCache(tmp_path / "elsewhere"))
    for path in own:
        result.save(path)
    notes = tmp_path / "notes.part"  # an old file of one's own that happens to end in .part
    notes.write_text("draft")
    hours_ago = time.time() - 2 * 3600
    for path in (*own, notes):
        os.utime(path, (hours_ago, hours_ago))
    cache = ResultCache(tmp_path, max_mb=1e-6)  # any result is past the cap: eviction runs after every write
    for example_id in ("comet-who", "bakery-where"):
        cached_explain(qa_model, gallery_example(example_id), SETTINGS, cache)
    assert all(path.exists() for path in (*own, notes))  # before: all three deleted
    assert cache.files() == []  # the cache's own results were evicted, as the cap asks


def test_results_written_before_the_prefix_are_read_and_never_deleted(tmp_path, tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("comet-who")
    key = ResultCache.key(qa_model.fingerprint, example, SETTINGS)
    written, _ = cached_explain(qa_model, example, SETTINGS, ResultCache(tmp_path / "elsewhere"))
    older = tmp_path / f"{key}.npz"  # as a cache (a committed run's) named its files before
    older.write_bytes(next((tmp_path / "elsewhere").glob(f"{PREFIX}*.npz")).read_bytes())
    cache = ResultCache(tmp_path, max_mb=1e-6)
    found, hit = cached_explain(qa_model, example, SETTINGS, cache)
    assert hit and found.answer == written.answer and np.array_equal(found.hidden_states, written.hidden_states)
    cached_explain(qa_model, gallery_example("bakery-where"), SETTINGS, cache)  # a write past the cap: eviction
    assert older.exists() and cache.files() == []
    older.write_bytes(b"not a zip")  # unreadable: a miss, recomputed, and the file is left as it is
    assert cache.get(key) is None and older.read_bytes() == b"not a zip"


def test_a_whole_passage_keeps_one_windows_states_through_the_cache_and_its_map_shows_that_window(tmp_path,
                                                                                                  tiny_bert):
    from rcqa.figures import projection

    example, settings = gallery_example("canal-long"), ExplainSettings(windows="all", steps=2, tolerance=None)
    cache = ResultCache(tmp_path)
    result, _ = cached_explain(tiny_bert, example, settings, cache)
    again, hit = cached_explain(tiny_bert, example, settings, cache)
    assert hit and result.windowing.n_windows > 2
    window_tokens = len(result.hidden_tokens)
    assert result.hidden_states.shape == (tiny_bert.num_layers + 1, window_tokens, tiny_bert.config.hidden_size)
    assert window_tokens <= tiny_bert.max_len < len(result.tokens)
    assert again.hidden_tokens == result.hidden_tokens and np.array_equal(again.hidden_states, result.hidden_states)
    chart = projection(again, 2, "pca")
    assert chart.data.position.tolist() == result.hidden_tokens
    assert chart.data.token.tolist() == [result.tokens[i] for i in result.hidden_tokens]


def test_an_old_whole_passage_result_loads_without_reading_its_every_windows_states(tmp_path, tiny_bert,
                                                                                     monkeypatch):
    from rcqa.attribution import cache as cache_module

    example, settings = gallery_example("canal-long"), ExplainSettings(windows="all", steps=2, tolerance=None)
    cache = ResultCache(tmp_path)
    result, _ = cached_explain(tiny_bert, example, settings, cache)
    # as results were kept before: every token's states of the whole passage, no hidden_tokens
    everyone = np.ones((len(result.layers), len(result.tokens), tiny_bert.config.hidden_size), dtype=np.float32)
    key = cache.key(tiny_bert.fingerprint, example, settings)
    for written in cache.files():  # kept under the name the cache gave its files before (<key>.npz)
        written.unlink()
    (tmp_path / f"{key}.npz").write_bytes(replace(result, hidden_states=everyone, hidden_tokens=None).to_npz(True))
    read = []
    original = np.lib.npyio.NpzFile.__getitem__
    monkeypatch.setattr(np.lib.npyio.NpzFile, "__getitem__", lambda self, name: (read.append(name),
                                                                                 original(self, name))[1])
    monkeypatch.setattr(cache_module, "LARGEST_STATES_BYTES", everyone.nbytes - 1)
    old = ResultCache(tmp_path).get(key)
    assert old is not None and old.hidden_states is None and old.hidden_tokens is None
    assert "hidden_states" not in read and np.allclose(old.scores, result.scores, rtol=2**-23)
    monkeypatch.setattr(cache_module, "LARGEST_STATES_BYTES", everyone.nbytes + 4096)  # with the .npy header
    assert np.array_equal(ResultCache(tmp_path).get(key).hidden_states, everyone)  # within the bound: read
