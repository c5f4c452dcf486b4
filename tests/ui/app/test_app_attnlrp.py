"""Explore's method choice: AttnLRP through the same queue, its conservation on the Completeness tab, its URL key;
and on Compare layers, how far AttnLRP's layers agree with IG's."""
import os

import numpy as np
import pytest

from rcqa.analysis.agreement import layer_agreement
from rcqa.attribution.explanation import explain as explain_example
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from tests.helpers.app_harness import explain, html_of, open_app, open_tab, spec_titled, values

pytestmark = pytest.mark.usefixtures("app_env")


def test_attnlrp_is_chosen_explained_and_linked():
    app = open_app(query={"ex": "comet-who"})
    app.radio(key="rcqa.widget.method").set_value("attnlrp").run()
    assert app.query_params["method"] == "attnlrp"
    explain(app)
    assert app.status[0].label.startswith("Attributed 4 layers of ")
    heatmap = spec_titled(app, "Where each layer's attribution goes")
    assert heatmap["data"][0]["y"] == ["embeddings", "block 0", "block 1", "block 2"]
    subtitle = heatmap["layout"]["title"]["subtitle"]["text"]
    assert "AttnLRP (one pass)" in subtitle and "baseline" not in subtitle
    conservation = spec_titled(open_tab(app, "Completeness"), "AttnLRP's conservation per layer")
    assert len(values(conservation["data"][0]["y"])) == 4
    assert not app.warning  # no completeness warning: conservation is not completeness
    # AttnLRP explains the span logits unless a target was picked; the ledger of that target stands beside it
    assert app.selectbox(key="rcqa.widget.target").value == "span_logits" and "target" not in app.query_params
    ledger = spec_titled(app, "The ledger of span_logits")
    assert ledger["data"][0]["header"]["values"][1:3] == ["Σ relevance", "conservation error"]
    assert "threshold: 1% of the entering relevance" in [trace.get("name") for trace in conservation["data"]]
    app.radio(key="rcqa.widget.method").set_value("integrated_gradients").run()
    assert app.selectbox(key="rcqa.widget.target").value == "span_log_prob"  # IG's own default again
    assert "Windows explained" not in html_of(app)


def test_a_link_with_an_unknown_method_falls_back_to_ig():
    app = open_app(query={"ex": "comet-who", "method": "lime"})
    assert app.radio(key="rcqa.widget.method").value == "integrated_gradients"


def test_compare_layers_explains_the_other_method_on_a_click_and_draws_their_agreement():
    # 3 fixed steps: settings no other test explains with, so that the shared result cache keeps no result for them
    app = open_app(query={"ex": "orchard-how-many", "steps": "3", "tol": "off"})
    app.switch_page("pages/compare_layers.py").run()
    explain(app)
    assert "rcqa.ask.analysis.agreement" in [button.key for button in app.button]
    app.button(key="rcqa.ask.analysis.agreement").click().run()
    assert not app.exception, [e.value for e in app.exception]
    chart = spec_titled(app, "How far AttnLRP agrees with Integrated Gradients")
    correlation, overlap = (values(trace["y"]) for trace in chart["data"][:2])  # the chosen score's (L2)
    # the page's numbers are those of the library on the two explanations
    tiny = load_model(os.environ["RCQA_MODEL"])
    example = gallery_example("orchard-how-many")
    ig = ExplainSettings(steps=3, tolerance=None)
    rows = layer_agreement(explain_example(tiny, example, ig),
                           explain_example(tiny, example, ExplainSettings(method="attnlrp", steps=3, tolerance=None)))
    assert np.allclose(correlation, [row.spearman for row in rows], equal_nan=True)
    assert np.allclose(overlap, [row.top_k_overlap for row in rows])
