"""The Python API: `import rcqa` stays light, the names run on plain strings, a result shows, saves and loads itself."""
import dataclasses
import datetime as dt
import json
import subprocess
import sys
import tempfile
import types
import webbrowser
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import rcqa
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain as engine_explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures.words import PAGE_WORDS
from rcqa.gallery import gallery_example
from rcqa.types import Attribution, Example
from rcqa.types.header import headline

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


def test_the_sentence_check_reads_the_explained_span_again_without_each_sentence(tiny, comet):
    from rcqa.faithfulness.sentences.ablation import answer_probability, without_sentences

    evidence, check = rcqa.sentence_check(tiny, comet, ablations=8)
    ablation = evidence.ablation
    start, end = comet.explained_span()
    assert ablation.answer == comet.example.passage[start:end] and evidence.surrogate.ablations == 8
    kept = next(n for n, (a, b) in enumerate(ablation.sentences) if not a <= start < b)  # a context sentence
    shortened, moved = without_sentences(comet.example.passage, [ablation.sentences[kept]])
    by_hand = answer_probability(tiny, shortened, comet.example.question, moved(start), moved(end))
    assert ablation.without[kept] == pytest.approx(by_hand)
    assert len(check.rho_leave_one_out) == len(comet.layers)
    _, no_surrogate = rcqa.sentence_check(tiny, comet, ablations=0)
    assert no_surrogate.rho_surrogate == [None] * len(comet.layers)


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
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)  # computed_at is to the second
    stored = rcqa.explain(tiny, example.passage, example.question, cache=mine, **SHORT)
    assert before <= dt.datetime.fromisoformat(stored.computed_at) <= dt.datetime.now(dt.UTC)
    (kept,) = mine.glob("*.npz")
    again = rcqa.explain(tiny, example.passage, example.question, cache=str(mine), **SHORT)
    assert list(mine.glob("*.npz")) == [kept]
    assert (again.seconds, again.computed_at) == (stored.seconds, stored.computed_at)  # that run's, read back


def test_a_result_saved_before_it_recorded_its_date_loads_with_none():
    written_before = Path(__file__).parents[1] / "data" / "results_main" / "contrast_one_window.json"
    assert "computed_at" not in json.loads(written_before.read_text(encoding="utf-8"))
    old = rcqa.load_result(written_before)
    assert old.computed_at is None and "computed_at" not in old.to_dict()  # written back as it was read


def test_a_model_and_a_result_repr_in_one_line_without_arrays(tiny, comet):
    shown = repr(tiny)
    assert "\n" not in shown and len(shown) < 200
    assert shown == (f"<QAModel {tiny.name!r}: bert BertForQuestionAnswering, {tiny.config.num_hidden_layers} blocks, "
                     f"cpu, fingerprint {tiny.fingerprint}>")
    said = repr(comet)
    assert "\n" not in said and len(said) < 400 and "array" not in said
    assert said.startswith(f"<Attribution of 'Who was the comet named after?' → {comet.answer.text!r} · model ")
    passage = [w for w in comet.words if w.segment == "passage" and any(c.isalnum() for c in w.text)]
    assert said.endswith(f"integrated_gradients, span_log_prob · {tiny.config.num_hidden_layers + 1} layers × "
                         f"{len(passage)} passage words>")


@pytest.mark.parametrize("question, limit, name", [
    ("How many of the 2,300 trees in the Hollins family orchard, on the southern slope of the valley, are pear trees?",
     80, "How many of the 2,300 trees in the Hollins family orchard, on the southern…"),
    ("Who, in the end, paid?", 17, "Who, in the end…"),  # a whole word that fits, its comma dropped
    ("Who  named\nthe comet?", 80, "Who named the comet?"),  # on one line
    ("Supercalifragilistic?", 10, "Supercali…"),  # no space to cut at: nine letters and the ellipsis
])
def test_a_result_is_named_by_its_question_on_one_line_cut_after_a_whole_word(question, limit, name):
    assert headline(question, limit) == name and len(name) <= limit


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


def test_figure_draws_each_view_over_every_layer(comet):
    layers = len(comet.layers)
    heatmap = comet.figure("heatmap")
    assert isinstance(heatmap, go.Figure) and list(heatmap.data[0].y) == comet.layers
    assert len(heatmap.data[0].z) == layers and len(heatmap.data[0].z[0]) == len(comet.passage_words())
    table = comet.figure("top-k", k=3)
    assert isinstance(table.data[0], go.Table) and len(table.data[0].cells.values) == 1 + 3
    assert list(table.data[0].cells.values[0]) == comet.layers
    assert all(len(trace.x) == layers for trace in comet.figure("roles").data)
    assert np.asarray(comet.figure("jsd").data[0].z).shape == (layers, layers)


def test_figure_draws_the_explore_pages_checks_and_word_views(comet):
    errors = [100 * abs(c.attribution_sum - (c.f_input - c.f_baseline)) / abs(c.f_input - c.f_baseline)
              for c in comet.completeness]  # |Σ attributions − ΔF| / |ΔF| per layer, from the checks themselves
    (bars,) = [trace for trace in comet.figure("completeness").data if trace.type == "bar"]  # one target: one series
    assert list(bars.x) == comet.layers and list(bars.y) == pytest.approx([max(e, 1e-6) for e in errors])
    first = comet.example.passage[slice(*comet.explained_span())].split()[0]  # the answer's first word, by default
    assert comet.figure("word").layout.title.text.startswith(f"“{first}” across layers")
    third = comet.passage_words()[2].text
    assert comet.figure("word", word=2).layout.title.text.startswith(f"“{third}” across layers")
    (pages,) = comet.figure("overview").data  # as many blocks as the heatmap has pages, every layer's whole share
    words = len(comet.passage_words())
    shares = np.asarray(pages.z)
    assert shares.shape == (len(comet.layers), -(-words // PAGE_WORDS)) and words > PAGE_WORDS
    assert shares.sum(axis=1) == pytest.approx(np.full(len(comet.layers), 100.0))


def test_the_passage_views_are_html_a_notebook_draws_and_write_html_saves(comet, tmp_path):
    last, first = comet.figure("top-k-passage", k=3), comet.figure("top-k-passage", k=3, layer=0)
    assert last.html.count("<mark") == 3 and comet.layers[-1] in last.html and last._repr_html_() == last.html
    assert first.html.count("<mark") == 3 and comet.layers[0] in first.html and first.html != last.html
    grid = comet.figure("top-k-grid", k=2)
    assert grid.html.count("<mark") == 2 * len(comet.layers) and all(label in grid.html for label in comet.layers)
    grid.write_html(tmp_path / "grid.html")
    page = (tmp_path / "grid.html").read_text(encoding="utf-8")
    assert page == f'<!DOCTYPE html>\n<meta charset="utf-8">\n{grid.html}\n'  # a whole page, in UTF-8
    with pytest.raises(ValueError, match=rf"no layer {len(comet.layers)}: this result has {len(comet.layers)}"):
        comet.figure("top-k-passage", layer=len(comet.layers))


def test_a_view_this_result_cannot_draw_says_why_and_an_unknown_one_lists_every_view(tiny, comet):
    with pytest.raises(ValueError, match="unknown view 'map'; choose one of heatmap, overview, start-end, top-k, "
                                         "top-k-passage, top-k-grid, roles, pos, quantifiers, word, completeness, "
                                         "ledger, jsd"):
        comet.figure("map")
    with pytest.raises(ValueError, match="no quantifiers view: the question asks no 'how many'"):
        comet.figure("quantifiers")
    with pytest.raises(ValueError, match="no ledger view: only AttnLRP keeps a ledger"):
        comet.figure("ledger")
    with pytest.raises(ValueError, match="no start-end view: it does not explain both start_logit and end_logit"):
        comet.figure("start-end")
    orchard, comet_text = gallery_example("orchard-how-many"), gallery_example("comet-who")
    counted = rcqa.explain(tiny, orchard.passage, orchard.question, **SHORT)
    assert len(counted.figure("quantifiers").data[0].x) == len(counted.layers)
    apart = rcqa.explain(tiny, comet_text.passage, comet_text.question, targets=("start_logit", "end_logit"), **SHORT)
    assert [trace.type for trace in apart.figure("start-end").data] == ["heatmap"] * 3  # start, end, and joined
    relevance = rcqa.explain(tiny, comet_text.passage, comet_text.question, method="attnlrp")
    assert list(relevance.figure("ledger").data[0].cells.values[0]) == relevance.layers


@pytest.fixture
def headless(monkeypatch, tmp_path):
    """A Linux machine with no display, its temporary folder tmp_path; a browser opened fails the test."""
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(webbrowser, "open", lambda uri: pytest.fail(f"opened {uri} with no display"))
    return tmp_path


def test_show_in_a_script_with_no_display_writes_nothing_and_says_how_to_save(comet, headless, capsys):
    shown = comet.show("completeness")
    assert isinstance(shown, go.Figure) and shown.to_json() == comet.figure("completeness").to_json()
    assert capsys.readouterr().err == ("rcqa: no display here to show the completeness on; save the figure that show "
                                       "returns with .write_html('completeness.html')\n")
    assert list(headless.iterdir()) == []


@pytest.mark.parametrize("opens", [True, False])
def test_show_in_a_script_with_a_display_opens_an_html_file_and_says_where(comet, headless, capsys, monkeypatch,
                                                                          opens):
    monkeypatch.setenv("DISPLAY", ":0")
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda uri: opened.append(uri) or opens)
    heatmap, grid = comet.show("heatmap"), comet.show("top-k-grid")
    (page,), (passages,) = headless.glob("rcqa-heatmap-*.html"), headless.glob("rcqa-top-k-grid-*.html")
    assert len(list(headless.iterdir())) == 2 and opened == [page.as_uri(), passages.as_uri()]
    assert heatmap.data[0].y[0] in page.read_text(encoding="utf-8")  # the figure, with plotly.js
    assert grid.html in passages.read_text(encoding="utf-8")
    said = "opens in your browser from" if opens else "is in"
    assert capsys.readouterr().err == (f"rcqa: the heatmap {said} {page}\n"
                                       f"rcqa: the top-k-grid {said} {passages}\n")


def test_show_in_ipython_only_returns_the_figure_for_the_notebook_to_draw(comet, headless, capsys, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: object()))
    assert comet.show("jsd").to_json() == comet.figure("jsd").to_json()
    assert capsys.readouterr().err == "" and list(headless.iterdir()) == []


def test_the_notebook_view_escapes_the_passage(tiny):
    passage = "The comet was named by <script>alert(1)</script> Edmond Halley, who computed its orbit in 1705."
    result = rcqa.explain(tiny, passage, "Who named the comet?", **SHORT)
    page = result._repr_html_()
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert result.answer.text.split()[0].replace("<", "&lt;") in page and "<mark" in page
