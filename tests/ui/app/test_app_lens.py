"""The Explore page's "Answer lens" and "Interventions" tabs."""
import numpy as np
import pytest

from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.qa import answer
from tests.helpers.app_harness import explain, open_app, open_tab, plotly_specs, spec_titled, texts, values

pytestmark = pytest.mark.usefixtures("app_env")
LAYERS = ["embeddings", "block 0", "block 1", "block 2"]


def test_the_answer_lens_tab_shows_what_each_layer_would_answer(tiny_model_dirs):
    app = explain(open_app())
    assert {"Answer lens", "Interventions"} <= {tab.label for tab in app.tabs}
    assert not any(s["layout"]["title"]["text"].startswith("What each layer would answer") for s in plotly_specs(app))
    open_tab(app, "Answer lens").button(key="rcqa.ask.lens").click().run()  # the lens is read on a click, through the queue
    traces = {trace["name"]: trace for trace in spec_titled(app, "What each layer would answer")["data"]}
    assert set(traces) == {"head: its own best span", "head: the final answer"}  # the tiny model has no probes
    example = gallery_example("lighthouse-who")
    own = answer(load_model(tiny_model_dirs["bert"]), example.passage, example.question)
    for trace in traces.values():
        assert list(values(trace["x"])) == LAYERS
        assert values(trace["y"])[-1] == pytest.approx(100 * own.best.probability)  # the head's last layer
    assert "Only the QA head reads the layers: no probes for" in texts(app.caption)
    (table,) = [frame.value for frame in app.dataframe if "reader" in frame.value.columns]
    assert table.layer_label.tolist() == LAYERS and table.span.iloc[-1] == own.text


def test_the_interventions_tab_knocks_out_words_on_request_with_either_baseline():
    app = open_tab(explain(open_app()), "Interventions")
    app.button(key="rcqa.ask.knockouts").click().run()
    chart = spec_titled(app, "How the explained span's probability changes")
    bars = {trace["name"]: trace for trace in chart["data"]}
    assert list(bars) == ["top-k", "random", "bottom-k", "skip block"]
    assert list(values(bars["top-k"]["x"])) == LAYERS and list(values(bars["skip block"]["x"])) == LAYERS[1:]
    assert bars["random"]["error_y"]["visible"] and not bars["top-k"]["error_y"]["visible"]
    assert np.all(np.abs(values(bars["top-k"]["y"])) <= 100)
    assert "5 draws" in chart["layout"]["title"]["subtitle"]["text"]
    # the sentence under the chart is the chart's own (tests/ui/app/test_app_sentences.py reads it against the bars)
    raised = sum(int((values(bar["y"]).round(1) > 0).sum()) for name, bar in bars.items())
    sentence = texts(app.caption)
    assert ("Knocking out" in sentence) if raised else ("No knock-out raised" in sentence)

    app.radio(key="rcqa.widget.knockout").set_value("zero").run()
    assert app.query_params["ko"] == "zero"
    app.button(key="rcqa.ask.knockouts").click().run()  # another baseline: asked for anew
    subtitle = spec_titled(app, "How the explained")["layout"]["title"]["subtitle"]["text"]
    assert "replaced by zeros" in subtitle
