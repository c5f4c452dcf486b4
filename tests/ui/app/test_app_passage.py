"""Explore's whole passage: offered only for a passage of several windows, with its cost; computed through the
queue; drawn over the whole passage."""
import pytest

from tests.helpers.app_harness import html_of, open_app, open_tab, spec_titled, texts

pytestmark = pytest.mark.usefixtures("app_env")


def test_a_one_window_passage_offers_no_whole_passage():
    app = open_app(query={"ex": "comet-who", "win": "all"})
    assert not [r for r in app.radio if r.key == "rcqa.widget.windows"]


def test_a_long_passage_is_explained_whole_through_the_queue():
    app = open_app(query={"ex": "canal-long"})
    (windows,) = [r for r in app.radio if r.key == "rcqa.widget.windows"]
    assert windows.value == "answer"  # the default stays the answer's window
    n = int(windows.options[1].split("(")[1].split(" ")[0])
    assert n > 1 and f"{n} windows: about {n}× the time" in windows.options[1]
    windows.set_value("all").run()
    assert app.query_params["win"] == "all"
    assert f"over all {n} windows of the passage" in texts(app.caption)
    app.button(key="rcqa.explain").click().run()
    assert not app.exception, [e.value for e in app.exception]
    heatmap = spec_titled(app, "Where each layer's attribution goes")
    assert f"the whole passage, {n} windows" in heatmap["layout"]["title"]["subtitle"]["text"]
    assert heatmap["layout"]["xaxis"]["title"]["text"].startswith("Words of the whole passage")
    assert "Only the analysed window is shown" not in html_of(app)
    for tab in ("Answer lens", "Interventions"):
        assert "This tab reads one window" in texts(open_tab(app, tab).info)
