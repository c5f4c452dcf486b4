"""What a page draws of a result, built once and kept (rcqa.ui.drawn, rcqa.figures.stored): a stored chart sends
exactly what the figure built from the result sends, pickles as its JSON (a worker hands it over), is built once
per result and view, and the kept results stay within their bytes."""
import pickle

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

    charts = drawn.charts_of("a result")
    first = charts.get(counted, apart, 5, "l2")
    assert drawn.charts_of("a result").get(counted, apart, 5, "l2") is first  # another session, the same view
    charts.get(counted, apart, 3, "l2")
    assert calls == [(5, "l2"), (3, "l2")]
    assert drawn.charts_of("another result").get(counted, apart, 5, "l2") is not first


def test_the_kept_results_stay_within_their_bytes_the_least_recently_used_dropped(apart, monkeypatch):
    one = drawn.HeatmapView("l2", False, None).draw(apart)
    size = one.held
    heatmap = one.get(figures.heatmap, apart, "l2", include_question=False, include_special=False)
    assert size > len(heatmap.figure.spec) + heatmap.data.memory_usage(deep=True).sum()
    monkeypatch.setattr(drawn, "KEPT_MB", 2.5 * size / 2**20)  # room for two results' views
    for key in ("first", "second"):
        drawn.keep(key, one)
    drawn.charts_of("first")  # used again: the second is now the least recently used
    drawn.keep("third", one)
    assert set(drawn._kept) == {"first", "third"}
    monkeypatch.setattr(drawn, "KEPT_MB", 0)
    drawn.keep("fourth", one)
    assert set(drawn._kept) == {"fourth"}  # the one just kept stays, whatever its size
    drawn.charts_of("fifth").get(figures.roles, apart, 5, "l2")  # views built in the page count too
    drawn.charts_of("fifth")
    assert set(drawn._kept) == {"fifth"}
