"""The Python API: `import rcqa` stays light, the names run on plain strings, a result shows, saves and loads itself."""
import dataclasses
import json
import subprocess
import sys

import numpy as np
import plotly.graph_objects as go
import pytest

import rcqa
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain as engine_explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.types import Attribution, Example

SHORT = {"steps": 4, "tolerance": None}  # a fixed 4-point rule: fast, and the same numbers every time


@pytest.fixture(scope="module")
def tiny(tiny_model_dirs):
    return rcqa.load_model(tiny_model_dirs["bert"])


@pytest.fixture(scope="module")
def comet(tiny):
    example = gallery_example("comet-who")
    return rcqa.explain(tiny, example.passage, example.question, **SHORT)


def test_import_rcqa_loads_no_torch_and_every_name_resolves():
    script = ("import rcqa, sys; assert 'torch' not in sys.modules, 'torch imported'; "
              "assert sorted(rcqa.__all__) == dir(rcqa); assert rcqa.__version__")
    subprocess.run([sys.executable, "-c", script], check=True)
    for name in rcqa.__all__:
        assert getattr(rcqa, name) is not None, name
    assert callable(rcqa.lens) and rcqa.lens.answer_lens  # the package is the API's lens
    with pytest.raises(AttributeError, match="no attribute 'explian'"):
        rcqa.explian


def test_explain_on_plain_strings_is_the_engine_with_the_preset_and_the_given_settings(tiny, comet):
    example = gallery_example("comet-who")
    expected = engine_explain(tiny, Example("python", example.passage, example.question), ExplainSettings(**SHORT))
    assert np.array_equal(comet.scores, expected.scores) and comet.answer == expected.answer
    paper = rcqa.explain(tiny, example.passage, example.question, preset="paper-code")
    assert (paper.settings.baseline, paper.settings.rule) == ("zero", "paper_trapezoid")
    gold = rcqa.explain(tiny, example.passage, example.question, span="gold", gold="Priya Raman", **SHORT)
    assert gold.targets[0].span == "Priya Raman"


def test_unknown_settings_and_presets_are_refused_by_name(tiny):
    with pytest.raises(ValueError, match="unknown explanation setting 'stepz'; the settings are allow_null, baseline, contrast, max_steps"):
        rcqa.explain(tiny, "A passage.", "What?", stepz=4)
    with pytest.raises(ValueError, match="unknown preset 'paper'; choose one of default, paper-code"):
        rcqa.explain(tiny, "A passage.", "What?", preset="paper")
    with pytest.raises(ValueError, match="'Halley' is not in the passage"):
        rcqa.explain(tiny, "A passage.", "What?", gold="Halley")
    with pytest.raises(TypeError, match="give a model name"):
        rcqa.answer(3, "A passage.", "What?")


def test_answer_lens_compare_and_intervene_take_plain_strings(tiny, comet):
    example = gallery_example("comet-who")
    assert rcqa.answer(tiny, example.passage, example.question).text == comet.answer.text
    lens = rcqa.lens(tiny, example.passage, example.question)
    assert lens.layers == comet.layers and lens.answer == comet.answer
    found = rcqa.intervene(tiny, comet, k=2, draws=1)
    assert [layer.label for layer in found.layers] == comet.layers
    with pytest.raises(TypeError, match="takes no question or settings"):
        rcqa.intervene(tiny, comet, example.question)
    compared = rcqa.compare_methods(tiny, example.passage, example.question, ["gradient"], k=2, draws=1, **SHORT)
    assert set(compared.methods) == {"gradient:magnitude", "random"}


def assert_same_result(restored: Attribution, result: Attribution) -> None:
    for field in dataclasses.fields(Attribution):
        mine, theirs = getattr(restored, field.name), getattr(result, field.name)
        if isinstance(theirs, np.ndarray):
            assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs), field.name
        else:
            assert mine == theirs, field.name


@pytest.mark.parametrize("suffix, options", [(".json", {"hidden_states": True}), (".npz", {})])
def test_a_saved_result_loads_back_exactly(comet, tmp_path, suffix, options):
    assert comet.hidden_states is not None and comet.scores.dtype == np.float64
    assert_same_result(rcqa.load_result(comet.save(tmp_path / f"comet{suffix}", **options)), comet)


def test_a_json_leaves_the_layer_outputs_out_unless_asked(comet, tmp_path):
    plain, whole = comet.save(tmp_path / "plain.json"), comet.save(tmp_path / "whole.json", hidden_states=True)
    written = json.loads(plain.read_text(encoding="utf-8"))
    assert "hidden_states" not in written and written["scores"] == comet.scores.tolist()
    assert json.loads(whole.read_text(encoding="utf-8"))["hidden_states"] == comet.hidden_states.tolist()
    states = comet.hidden_states.size * 4  # float32 bytes: as JSON text each takes more than its 4 bytes
    assert whole.stat().st_size - plain.stat().st_size > states
    assert_same_result(rcqa.load_result(plain), dataclasses.replace(comet, hidden_states=None))


@pytest.mark.parametrize("off", [None, False])
def test_cache_none_or_false_keeps_nothing_and_true_or_a_folder_keeps_the_result(tiny, tmp_path, monkeypatch, off):
    default = tmp_path / "default-folder"
    monkeypatch.setenv("RCQA_RESULT_CACHE", str(default))
    example = gallery_example("comet-who")
    rcqa.explain(tiny, example.passage, example.question, cache=off, **SHORT)
    assert not default.exists()  # before: None opened the default folder and kept the result there
    rcqa.explain(tiny, example.passage, example.question, cache=True, **SHORT)
    assert len(list(default.glob("*.npz"))) == 1
    mine = tmp_path / "mine"
    stored = rcqa.explain(tiny, example.passage, example.question, cache=mine, **SHORT)
    (kept,) = mine.glob("*.npz")
    again = rcqa.explain(tiny, example.passage, example.question, cache=str(mine), **SHORT)
    assert list(mine.glob("*.npz")) == [kept] and again.seconds == stored.seconds  # its time as stored: read back


def test_a_model_and_a_result_repr_in_one_line_without_arrays(tiny, comet):
    shown = repr(tiny)
    assert "\n" not in shown and len(shown) < 200
    assert shown == (f"<QAModel {tiny.name!r}: bert BertForQuestionAnswering, {tiny.config.num_hidden_layers} blocks, "
                     f"cpu, fingerprint {tiny.fingerprint}>")
    said = repr(comet)
    assert "\n" not in said and len(said) < 400 and "array" not in said
    assert said.startswith(f"<Attribution of 'python': {comet.example.question!r} → {comet.answer.text!r} · model ")
    passage = [w for w in comet.words if w.segment == "passage" and any(c.isalnum() for c in w.text)]
    assert said.endswith(f"integrated_gradients, span_log_prob · {tiny.config.num_hidden_layers + 1} layers × "
                         f"{len(passage)} passage words>")


def test_load_result_reads_explain_json_and_the_result_cache(comet, tmp_path):
    document = {**comet.to_dict(), "analyses": {"top_k": []}}  # what `rcqa explain --json` writes
    (tmp_path / "explain.json").write_text(json.dumps(document))
    assert_same_result(rcqa.load_result(tmp_path / "explain.json"), dataclasses.replace(comet, hidden_states=None))
    cache = ResultCache(tmp_path / "cache")
    cache.put("key", comet)
    (stored,) = cache.files()
    cached = rcqa.load_result(stored)
    assert np.allclose(cached.scores, comet.scores, rtol=2**-23, atol=0) and cached.words == comet.words
    with pytest.raises(ValueError, match="as .json or .npz"):
        comet.save(tmp_path / "comet.pickle")


def test_show_draws_each_view_over_every_layer(comet):
    layers = len(comet.layers)
    heatmap = comet.show("heatmap")
    assert isinstance(heatmap, go.Figure) and list(heatmap.data[0].y) == comet.layers
    assert len(heatmap.data[0].z) == layers and len(heatmap.data[0].z[0]) == len(comet.passage_words())
    table = comet.show("top-k", k=3)
    assert isinstance(table.data[0], go.Table) and len(table.data[0].cells.values) == 1 + 3
    assert list(table.data[0].cells.values[0]) == comet.layers
    assert all(len(trace.x) == layers for trace in comet.show("roles").data)
    assert np.asarray(comet.show("jsd").data[0].z).shape == (layers, layers)
    with pytest.raises(ValueError, match="unknown view 'map'; choose one of heatmap, top-k, roles, jsd"):
        comet.show("map")


def test_the_notebook_view_escapes_the_passage(tiny):
    passage = "The comet was named by <script>alert(1)</script> Edmond Halley, who computed its orbit in 1705."
    result = rcqa.explain(tiny, passage, "Who named the comet?", **SHORT)
    page = result._repr_html_()
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert result.answer.text.split()[0].replace("<", "&lt;") in page and "<mark" in page
