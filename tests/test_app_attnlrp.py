"""Explore's method choice: AttnLRP through the same queue, its conservation on the Completeness tab, its URL key."""
import pytest

from tests.app_harness import app_env, explain, html_of, open_app, spec_titled, values  # noqa: F401

pytestmark = pytest.mark.usefixtures("app_env")


def test_attnlrp_is_chosen_explained_and_linked():
    app = open_app(query={"ex": "comet-who"})
    app.radio(key="rcqa.widget.method").set_value("attnlrp").run()
    assert app.query_params["method"] == "attnlrp"
    explain(app)
    assert app.status[0].label.startswith("Attributed 4 layers of ")
    heatmap = spec_titled(app, "Where each layer's attribution goes")
    assert heatmap["data"][0]["y"] == ["embeddings", "block 0", "block 1", "block 2"]
    conservation = spec_titled(app, "AttnLRP's conservation per layer")
    assert len(values(conservation["data"][0]["y"])) == 4
    assert not app.warning  # no completeness warning: conservation is not completeness
    assert "Windows explained" not in html_of(app)


def test_a_link_with_an_unknown_method_falls_back_to_ig():
    app = open_app(query={"ex": "comet-who", "method": "lime"})
    assert app.radio(key="rcqa.widget.method").value == "integrated_gradients"
