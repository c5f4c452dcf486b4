"""What a page draws of a result, built once and kept (rcqa.ui.drawn, rcqa.figures.stored): a stored chart sends
exactly what the figure built from the result sends, pickles as its JSON (a worker hands it over), is built once
per result and view, and the kept results stay within their bytes: the process's, and each session's with the
result it shows counted, so one visitor cycling views evicts only their own; a result's views are kept per example
shown, so no session's charts or downloads carry another's example id (issue 56)."""
import json
import pickle
from dataclasses import replace

import plotly.io
import plotly.tools
import pytest

from rcqa import figures
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures import whole_input
from rcqa.figures.stored import FigureJSON, figure_json, stored
from rcqa.gallery import gallery_example
from rcqa.ui import drawn
from tests.helpers.app_harness import explain as press_explain
from tests.helpers.app_harness import open_app


@pytest.fixture(scope="module")
def apart(tiny_bert):
    """A result with the start and end logits apart, so the heatmap tab draws all it can."""
    settings = ExplainSettings(steps=4, tolerance=None, targets=("span_logits", "start_logit", "end_logit"))
    return explain(tiny_bert, gallery_example("comet-who"), settings)


@pytest.fixture(autouse=True)
def empty_store():
    drawn.forget()
    yield
    drawn.forget()


def sent(figure) -> str:
    """What st.plotly_chart puts on the wire for a figure (streamlit.elements.plotly_chart: the figure's dict,
    validated where it is no figure, written by plotly.io.to_json unvalidated)."""
    return plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(figure, validate_figure=True),
                             validate=False)


def test_a_stored_chart_sends_what_the_built_figure_sends_and_pickles_as_its_json(apart):
    built = figures.heatmap(apart, "l2", include_question=True)
    kept = stored(built)
    assert isinstance(kept.figure, FigureJSON) and kept.data is built.data and kept.name == built.name
    assert sent(kept.figure) == sent(built.figure) == figure_json(built.figure)
    assert kept.figure.to_json() == built.figure.to_json(validate=False)  # a download's, an image job's
    again = pickle.loads(pickle.dumps(kept))
    assert isinstance(again.figure, FigureJSON) and again.figure.spec == kept.figure.spec
    assert len(pickle.dumps(kept.figure)) < len(kept.figure.spec) + 200  # its JSON, not the figure's objects
    html = figures.topk_passage(apart, 0, 5, "l2")
    assert stored(html) is html and stored(kept) is kept  # HTML charts, and stored ones, stay as they are


def test_the_heatmap_tab_drawn_ahead_is_the_one_built_from_the_result(apart):
    ahead = drawn.HeatmapView("l2", include_question=False, special_tokens=True).draw(apart)
    tab = drawn.heatmap_tab(ahead, apart, "l2", False, True)
    assert tab.heatmap.figure.spec == figure_json(figures.heatmap(apart, "l2", include_special=True).figure)
    apart_built = whole_input.start_end(apart, "l2", with_sum=False)
    assert tab.apart is not None and tab.apart.figure.spec == figure_json(apart_built.figure)
    assert tab.apart_reading == whole_input.start_end_reading(apart_built.data)
    assert tab.overview is None  # a short passage has no overview
    assert ahead.builds[f"{figures.heatmap.__module__}.heatmap"] == 1
    kept = pickle.loads(pickle.dumps(ahead))  # as the server receives it: nothing rebuilt to read it
    again = drawn.heatmap_tab(kept, apart, "l2", False, True)
    assert kept.builds == {} and again.apart_reading == tab.apart_reading
    assert [chart.figure.spec for chart in (again.heatmap, again.apart)] == [tab.heatmap.figure.spec,
                                                                            tab.apart.figure.spec]


def test_each_view_of_a_result_is_built_once_for_every_session_and_another_view_is_built_anew(apart):
    calls = []

    def counted(result, k, aggregation):
        calls.append((k, aggregation))
        return figures.roles(result, k, aggregation)

    charts = drawn.charts_of("a result", apart.example, "s1")
    first = charts.get(counted, apart, 5, "l2")
    assert drawn.charts_of("a result", apart.example, "s2").get(counted, apart, 5, "l2") is first  # another session
    charts.get(counted, apart, 3, "l2")
    assert calls == [(5, "l2"), (3, "l2")]
    assert drawn.charts_of("another result", apart.example, "s1").get(counted, apart, 5, "l2") is not first


def test_the_kept_results_stay_within_their_bytes_the_least_recently_used_dropped(apart, monkeypatch):
    one = drawn.HeatmapView("l2", False, None).draw(apart)
    size = one.held
    heatmap = one.get(figures.heatmap, apart, "l2", include_question=False, include_special=False)
    assert size > len(heatmap.figure.spec) + heatmap.data.memory_usage(deep=True).sum()
    monkeypatch.setattr(drawn, "KEPT_MB", 2.5 * size / 2**20)  # room for two results' views
    for key, session in (("first", "s1"), ("second", "s2")):
        drawn.keep(key, apart.example, one, session)
    drawn.charts_of("first", apart.example, "s1")  # used again: the second is now the least recently used
    drawn.keep("third", apart.example, one, "s3")
    assert kept() == {"first", "third"}
    monkeypatch.setattr(drawn, "KEPT_MB", 0)
    drawn.keep("fourth", apart.example, one, "s4")
    assert kept() == {"fourth"}  # the one just kept stays, whatever its size
    drawn.charts_of("fifth", apart.example, "s5").get(figures.roles, apart, 5, "l2")  # views built in the page count
    drawn.charts_of("fifth", apart.example, "s5")
    assert kept() == {"fifth"}


def kept() -> set[str]:
    """The result keys whose views the process keeps."""
    return {key for key, _ in drawn._store.entries}


# --- bounded per session, the current result's views counted; never another session's example (issue 56) ---------

def test_one_session_cycling_results_evicts_only_its_own_views_not_anothers_drawn_tab(apart, monkeypatch):
    tab = drawn.HeatmapView("l2", False, None).draw(apart)
    monkeypatch.setattr(drawn, "SESSION_KEPT_MB", 2.5 * tab.held / 2**20)  # a session's share: two results' tabs
    monkeypatch.setattr(drawn, "KEPT_MB", 4 * tab.held / 2**20)  # the process's: four
    drawn.keep("the other visitor's", apart.example, tab, "other")
    for cycled in range(12):  # before: each result kept pushed the least recently used of all out, theirs first
        drawn.keep(f"cycled {cycled}", apart.example, tab, "cycler")
    assert kept() == {"the other visitor's", "cycled 10", "cycled 11"}
    again = drawn.charts_of("the other visitor's", apart.example, "other")
    again.get(figures.heatmap, apart, "l2", include_question=False, include_special=False)
    assert again.builds == {}  # the worker's tab is still there: nothing built again


def test_the_current_results_views_are_bounded_the_one_just_built_kept(apart, monkeypatch):
    word = drawn.ResultCharts().value(("one",), lambda: figures.word_across_layers(apart, 0, "l2"))
    monkeypatch.setattr(drawn, "SESSION_KEPT_MB", 2.5 * drawn._size(word) / 2**20)  # two or three views of a result
    charts, built = drawn.charts_of("a result", apart.example, "s1"), 0
    for layer in range(len(apart.layers)):  # before: every view kept for as long as the result was current
        for k in (3, 5, 10):
            charts.get(figures.topk_passage, apart, layer, k, "l2")
        charts.get(figures.word_across_layers, apart, layer, "l2")
        built += 4
        assert charts.held <= drawn.SESSION_KEPT_MB * 2**20
    assert built == 4 * len(apart.layers) and 1 < len(charts._built) < built / 2
    last = charts.get(figures.word_across_layers, apart, len(apart.layers) - 1, "l2")
    assert charts.get(figures.word_across_layers, apart, len(apart.layers) - 1, "l2") is last  # the last stays
    other = drawn.charts_of("another result", apart.example, "s1")
    other.get(figures.word_across_layers, apart, 0, "l2")
    assert charts.held + other.held > drawn.SESSION_KEPT_MB * 2**20
    drawn.charts_of("another result", apart.example, "s1")
    assert kept() == {"another result"}  # the current one's views counted: together past the share


def test_views_and_their_names_are_another_examples_only_where_they_show_it(apart):
    twin = replace(apart.example, id="squad-twin-2")  # SQuAD v1.1 dev asks some questions twice, under two ids
    twin_result = replace(apart, example=twin)  # the result cache hands a result back as the asker's example
    ahead = drawn.HeatmapView("l2", False, None).draw(apart)  # the first asker's worker drew its tab
    drawn.keep("key", twin, ahead, "second")  # the second asker joined that job: not kept as its own
    tab = drawn.heatmap_tab(drawn.charts_of("key", twin, "second"), twin_result, "l2", False, False)
    assert tab.heatmap.name == "heatmap-squad-twin-2"  # before: heatmap-comet-who, the first asker's
    drawn.keep("key", apart.example, ahead, "first")
    own = drawn.heatmap_tab(drawn.charts_of("key", apart.example, "first"), apart, "l2", False, False)
    assert own.heatmap.name == f"heatmap-{apart.example.id}" and own.heatmap is ahead.get(
        figures.heatmap, apart, "l2", include_question=False, include_special=False)


def chart_names(app) -> set[str]:
    """The names a page's charts download under (st.plotly_chart's image filename)."""
    return {json.loads(chart.proto.config)["toImageButtonOptions"]["filename"] for chart in app.get("plotly_chart")}


def test_a_second_session_asking_the_same_passage_and_question_sees_its_own_example_id(app_env):
    example = gallery_example("lighthouse-when")
    first = press_explain(open_app(query={"ex": example.id, "steps": "4", "tol": "off"}))
    assert f"heatmap-{example.id}" in chart_names(first)
    second = open_app(query={"src": "paste", "steps": "4", "tol": "off"})  # the same text, pasted: another id
    second.text_area(key="rcqa.widget.passage").input(example.passage).run()
    second.text_input(key="rcqa.widget.question").input(example.question).run()
    press_explain(second)
    names = chart_names(second)
    assert names and not [name for name in names if example.id in name]  # before: heatmap-lighthouse-when
    assert any(name.startswith("heatmap-pasted-") for name in names)


def test_every_joined_jobs_value_names_its_charts_by_the_example_of_the_session_that_shows_it(tiny_bert, apart):
    """The queue joins identical requests (the same model, text and settings) from any session, so a job's value
    holds the first asker's example; each session shows it as its own (drawn.seen_by). Before: the lens, the
    heads, the sanity check and the methods' comparison each named their charts after the first asker's id."""
    from rcqa.faithfulness.compare import Protocol
    from rcqa.figures.methods import method_heatmap, method_passages
    from rcqa.figures.sanity import sanity_curves
    from rcqa.ui.worker import tasks

    example, quiet = apart.example, lambda report: None
    twin = replace(example, id="squad-twin-2", title="asked again")
    fast = ExplainSettings(steps=2, tolerance=None)
    joined = {
        "lens": (tasks.lens(tiny_bert, example, quiet), lambda found: [figures.layer_answers(found)]),
        "heads": (tasks.heads(tiny_bert, example, quiet), lambda found: [figures.head_grid(found[0])]),
        "sanity": (tasks.sanity(tiny_bert, example, fast, ("gradient",), quiet),
                   lambda found: [sanity_curves(found, "cascade")]),
        "comparison": (tasks.comparison(tiny_bert, example, fast, Protocol(k=2, fractions=(0.5,), draws=1), quiet),
                       lambda found: [method_heatmap(found), method_passages(found)]),
    }
    for kind, (found, charts) in joined.items():
        assert {chart.name for chart in charts(found)} and all(example.id in c.name for c in charts(found)), kind
        seen = drawn.seen_by(found, twin)
        names = [chart.name for chart in charts(seen)]
        assert all("squad-twin-2" in name and example.id not in name for name in names), (kind, names)
        assert drawn.seen_by(found, example) is found, kind  # the asker's own value is handed over untouched

    other_text = replace(twin, question="Who saw it first?")  # a value of another question is not this one's
    assert drawn.seen_by(joined["lens"][0], other_text) is joined["lens"][0]
