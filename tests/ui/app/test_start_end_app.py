"""Explore's "Start and end: joined | apart": apart explains the start and end logits in the same job as the target
as chosen, and shows their two heatmaps, a sentence read from them and their two completeness figures; joined shows
what it showed before; a contrast says why it is not split."""
import numpy as np
import pytest

from tests.helpers.app_harness import explain, open_app, open_tab, plotly_specs, spec_titled, texts, values

pytestmark = pytest.mark.usefixtures("app_env")

APART_TITLE = "Start and end apart"


def test_apart_shows_two_heatmaps_a_reading_and_two_completeness_figures():
    app = explain(open_app())
    assert not [s for s in plotly_specs(app) if s["layout"]["title"]["text"].startswith(APART_TITLE)]  # joined
    assert "choose “apart” under “Start and end”" in texts(app.caption)
    joined = values(spec_titled(app, "Where each layer's attribution goes")["data"][0]["z"])

    app.radio(key="rcqa.widget.ends").set_value("apart").run()
    assert app.query_params["ends"] == "apart"
    assert "and its start and end logits apart" in texts(app.caption)  # what the button will explain
    explain(app)
    assert len(app.get("progress")) == 1  # one job
    apart = spec_titled(app, APART_TITLE)
    heatmaps = [trace for trace in apart["data"] if trace["type"] == "heatmap"]
    assert len(heatmaps) == 2
    assert [a["text"] for a in apart["layout"]["annotations"]] == ["Start logit", "End logit"]
    assert values(heatmaps[0]["x"]).tolist() == values(heatmaps[1]["x"]).tolist()  # one word axis
    for trace in heatmaps:
        assert np.allclose(values(trace["z"]).sum(axis=1), 100)  # each layer's shares
    # the joined view is the target as chosen, as before (same path points, adaptive refinement aside)
    np.testing.assert_allclose(values(spec_titled(app, "Where each layer's attribution goes")["data"][0]["z"]),
                               joined, atol=1.0)
    assert "At the last layer (block 2)" in texts(app.markdown).replace("\\", "")  # as shown
    metrics = {metric.label: metric.value for metric in app.metric}
    assert set(metrics) == {"Start logit: completeness error (worst layer)",
                            "End logit: completeness error (worst layer)"}
    assert all(value.endswith("%") and float(value[:-1]) <= 1.0 for value in metrics.values())  # under 1 %
    completeness = spec_titled(open_tab(app, "Completeness"), "Completeness per layer")
    assert {trace.get("name") for trace in completeness["data"]} >= {"span_log_prob", "start_logit", "end_logit"}


def test_a_link_with_apart_opens_apart_and_a_contrast_says_why_it_is_joined():
    app = explain(open_app(query={"src": "gallery", "ex": "comet-who", "ends": "apart"}))
    assert app.radio(key="rcqa.widget.ends").value == "apart"
    assert len([t for t in spec_titled(app, APART_TITLE)["data"] if t["type"] == "heatmap"]) == 2

    app.selectbox(key="rcqa.widget.contrast").set_value("runner-up").run()
    assert app.radio(key="rcqa.ends_refused").value == "joined" and app.radio(key="rcqa.ends_refused").disabled
    assert "Start and end apart is not offered for a contrast" in texts(app.caption)
    assert app.query_params["ends"] == "apart"  # the choice stays for when a span is explained alone again
