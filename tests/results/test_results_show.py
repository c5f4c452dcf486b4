"""Every result kind draws itself through rcqa.drawing: figure returns the figure of the view asked for (show, which
shows it too, is tested in tests/api) and Jupyter's view is escaped HTML, while no result module imports the figures
(rcqa.figures registers its views when imported, and rcqa loads it on the first drawing)."""
import subprocess
import sys
from pathlib import Path

import plotly.graph_objects as go
import pytest

from rcqa import drawing
from tests.helpers.handmade_comparison import handmade_comparison
from tests.helpers.handmade_results import contrast_result, hand_interventions, hand_lens

ROOT = Path(__file__).parents[2]


def test_an_attribution_shows_each_view_and_escapes_its_html():
    result = contrast_result()
    heatmap = result.figure("heatmap")
    assert isinstance(heatmap, go.Figure) and heatmap.data[0].type == "heatmap"
    assert list(heatmap.data[0].y) == result.layers
    assert all(isinstance(result.figure(view), go.Figure) for view in ("top-k", "roles", "jsd"))
    with pytest.raises(ValueError, match="unknown view 'nope'"):
        result.figure("nope")
    assert "600" in result._repr_html_()


def test_a_comparison_shows_its_methods_and_deletion_curves():
    comparison = handmade_comparison()
    methods = comparison.figure()
    assert len(methods.data[0].y) == 3 and methods.data[0].y[-1] == "Random"  # the three methods, random last
    deletion = comparison.figure("deletion")
    assert isinstance(deletion, go.Figure) and {trace.type for trace in deletion.data} == {"scatter"}
    html = comparison._repr_html_()
    assert "5&lt;6" in html and "5<6" not in html  # the passage word "5<6", escaped wherever it is shown


def test_an_answer_lens_and_interventions_show_their_one_view():
    lens = hand_lens()
    assert {trace.name for trace in lens.figure().data} == {"head: its own best span", "head: the final answer",
                                                          "probe: its own best span", "probe: the final answer"}
    found = hand_interventions()
    bars = {bar.name: bar for bar in found.figure("knockouts").data}
    assert list(bars["top-k"].y) == pytest.approx([-60, -20])  # 0.7 → 0.1 and 0.7 → 0.5, in points
    for result in (lens, found):
        html = result._repr_html_()
        assert "&lt;b&gt;Ellison&lt;/b&gt;" in html and "<b>Ellison</b>" not in html
    with pytest.raises(ValueError, match="unknown view"):
        found.figure("layers")


def test_a_type_no_figures_draw_is_refused_in_one_sentence():
    with pytest.raises(TypeError, match="no figures draw a str"):
        drawing.figure("not a result")


def test_a_result_loaded_in_a_fresh_interpreter_draws_itself_and_only_then_loads_the_figures():
    script = ("import sys\n"
              "from rcqa.types import load_result\n"
              "result = load_result('tests/data/results_main/contrast_one_window.json')\n"
              "assert 'rcqa.figures' not in sys.modules and 'plotly' not in sys.modules\n"
              "figure = result.figure('roles')\n"
              "assert 'rcqa.figures' in sys.modules and type(figure).__name__ == 'Figure'\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
