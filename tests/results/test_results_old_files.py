"""Results written before the results were typed still load: tests/data/results_main/ holds files the code on main
(commit ee95b36) wrote with the tiny BERT of tests/helpers/tiny_models.py: a one-window contrast saved as JSON
(Attribution.save; its targets name no window) and a whole passage with a null target as the result cache keeps it
(to_npz(compact=True): three of the four aggregations, float32). Each is read back and checked field by field
against the file's own JSON, read with json and numpy alone."""
import json
from pathlib import Path

import numpy as np
import pytest

from rcqa.types import AGGREGATIONS, Attribution, Foil, ExplainSettings, Windowing, load_result

DATA = Path(__file__).parents[1] / "data" / "results_main"


@pytest.fixture(scope="module")
def contrast_file() -> tuple[Attribution, dict]:
    path = DATA / "contrast_one_window.json"
    return load_result(path), json.loads(path.read_text(encoding="utf-8"))


def test_an_old_contrast_json_loads_with_typed_targets_and_settings(contrast_file):
    result, raw = contrast_file
    contrast, logits = result.targets
    written = raw["targets"][0]
    assert (contrast.name, contrast.span, contrast.tokens) == ("contrast", written["span"],
                                                               (written["start_token"], written["end_token"]))
    assert contrast.window == result.window == raw["window"]  # an old one-window target named no window: its own
    foil = written["foil"]
    assert contrast.foil == Foil(foil["request"], foil["text"], foil["start_char"], foil["end_char"], foil["window"],
                                 foil["start_token"], foil["end_token"], foil["score"], foil["probability"])
    assert (contrast.foil_start_token, contrast.foil_end_token, contrast.foil_score) == (
        written["foil_start_token"], written["foil_end_token"], written["foil_score"])
    assert logits.foil is None and logits.null_token is None and logits.name == "span_logits"
    assert result.settings == ExplainSettings(targets=("span_logits",), contrast="runner-up", tolerance=None, steps=4)
    assert result.windowing == Windowing(max_len=raw["settings"]["max_len"], doc_stride=raw["settings"]["doc_stride"])
    assert not result.whole_passage
    # every JSON once held the layer outputs (save leaves them out now unless asked): they still load
    assert result.hidden_states.dtype == np.float32
    np.testing.assert_array_equal(result.hidden_states, np.asarray(raw["hidden_states"], dtype=np.float32))


def test_an_old_json_is_written_back_as_it_was_but_for_each_targets_window(contrast_file):
    result, raw = contrast_file
    again = json.loads(json.dumps(result.to_dict(include_hidden=True)))  # as a file holds it: tuples are lists
    assert [{k: v for k, v in t.items() if k != "window"} for t in again.pop("targets")] == raw.pop("targets")
    assert again == raw
    np.testing.assert_array_equal(result.scores, np.asarray(raw["scores"]))


def test_an_old_cache_file_of_a_whole_passage_loads_with_its_windowing_and_null_window():
    path = DATA / "whole_passage_cache.npz"
    result = Attribution.load(path)
    with np.load(path) as stored:
        meta = json.loads(stored["meta"].tobytes().decode())
        kept = stored["scores"]
    assert result.whole_passage and result.settings.windows == "all"
    assert result.windowing == Windowing(32, 8, meta["settings"]["n_windows"], tuple(meta["settings"]["windows_read"]))
    assert [t.name for t in result.targets] == ["span_logits", "null"]
    null = result.targets[1]
    assert (null.null_token, null.null_window, null.window) == (meta["targets"][1]["null_token"],
                                                               meta["targets"][1]["null_window"], meta["window"])
    # the cache kept l2, sum and abs_sum; l2_squared is l2², rebuilt on reading
    for stored_index, name in enumerate(meta["stored_aggregations"]):
        np.testing.assert_array_equal(result.scores[:, AGGREGATIONS.index(name)], kept[:, stored_index])
    l2 = kept[:, meta["stored_aggregations"].index("l2")].astype(np.float64)
    np.testing.assert_allclose(result.scores[:, AGGREGATIONS.index("l2_squared")], l2 ** 2)
