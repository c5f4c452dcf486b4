"""Each result kind saved and loaded back is the result it was, field by field and type by type, on results built by
hand: an Attribution (a contrast over a whole passage, as JSON and as .npz), a Comparison, an AnswerLens and
Interventions (as JSON). rcqa.load_result reads any of them by the kind its file names."""
import dataclasses
import json

import numpy as np
import pytest

import rcqa
from rcqa.faithfulness.compare import Comparison
from rcqa.types import Attribution, ExplainedTarget
from tests.helpers.handmade_comparison import handmade_comparison
from tests.helpers.handmade_results import contrast_result, hand_interventions, hand_lens


def same(a, b) -> bool:
    """Equal value and type all the way down (arrays by value, whatever their dtype)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("suffix, hidden_states", [(".json", True), (".json", False), (".npz", False)])
def test_an_attribution_comes_back_as_it_was(tmp_path, suffix, hidden_states):
    result = contrast_result()
    loaded = rcqa.load_result(result.save(tmp_path / f"result{suffix}", hidden_states=hidden_states))
    kept = suffix == ".npz" or hidden_states  # the JSON leaves the layer outputs out unless asked; the .npz keeps them
    assert same(loaded, dataclasses.replace(result, hidden_tokens=None,
                                            hidden_states=result.hidden_states if kept else None))
    assert isinstance(loaded.targets[0], ExplainedTarget) and loaded.targets[0].foil.text == "250"
    assert loaded.settings.windows == "all" and loaded.windowing.windows_read == (0, 1)
    assert Attribution.load(tmp_path / f"result{suffix}").scores.dtype == np.float64


@pytest.mark.parametrize("build, kind", [(handmade_comparison, "comparison"), (hand_lens, "answer_lens"),
                                         (hand_interventions, "interventions")])
def test_each_result_kind_comes_back_as_it_was(tmp_path, build, kind):
    result = build()
    path = result.save(tmp_path / "result.json")
    assert json.loads(path.read_text(encoding="utf-8"))["kind"] == kind
    assert same(rcqa.load_result(path), result)
    assert same(type(result).load(path), result)


def test_a_result_loaded_as_another_kind_or_of_no_known_kind_is_refused(tmp_path):
    path = hand_lens().save(tmp_path / "lens.json")
    with pytest.raises(TypeError, match="holds a AnswerLens, not a Comparison"):
        Comparison.load(path)
    path.write_text(json.dumps({"kind": "horoscope"}))
    with pytest.raises(ValueError, match="unknown result kind 'horoscope'"):
        rcqa.load_result(path)
    with pytest.raises(ValueError, match="save a AnswerLens as .json"):
        hand_lens().save(tmp_path / "lens.npz")


def test_the_header_is_shared_and_written_alike_by_every_kind():
    results = [contrast_result(), handmade_comparison(), hand_lens(), hand_interventions()]
    assert all(isinstance(r, rcqa.types.ResultHeader) for r in results)
    for result in results:
        document = result.to_dict()
        assert {k: document[k] for k in ("model", "fingerprint", "window", "tokens")} == {
            "model": result.model, "fingerprint": result.fingerprint, "window": result.window, "tokens": result.tokens}
        assert document["example"]["passage"] == result.example.passage
        assert document["answer"]["answer"] == result.answer.text


def test_every_kind_reprs_in_one_line_naming_its_question_and_answer():
    for result in (contrast_result(), handmade_comparison(), hand_lens(), hand_interventions()):
        said = repr(result)
        assert "\n" not in said and len(said) < 400 and "array(" not in said, type(result).__name__
        assert said.startswith(f"<{type(result).__name__} of {result.example.question!r} → ")
        assert f"model {result.model} ({result.fingerprint})" in said


def test_the_tokens_of_the_layer_outputs_travel_with_them_and_only_with_them(tmp_path):
    result = contrast_result()
    result = dataclasses.replace(result, hidden_states=result.hidden_states[:, :3], hidden_tokens=[4, 5, 6])
    for name, options in (("with.json", {"hidden_states": True}), ("with.npz", {})):
        loaded = rcqa.load_result(result.save(tmp_path / name, **options))
        assert loaded.hidden_tokens == [4, 5, 6] and np.array_equal(loaded.hidden_states, result.hidden_states)
    written = json.loads(result.save(tmp_path / "without.json").read_text(encoding="utf-8"))
    assert "hidden_states" not in written and "hidden_tokens" not in written
