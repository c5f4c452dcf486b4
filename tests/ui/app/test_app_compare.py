"""The Compare-layers page: it explains the current example on a click, then compares its layers; the token maps
are drawn on a click too."""
import re

import numpy as np
import pytest

from tests.helpers.app_harness import explain, open_app, plotly_specs, press, spec_titled, values

pytestmark = pytest.mark.usefixtures("app_env")
PAGE = "pages/compare_layers.py"


def map_layer(app):
    return press(app, "rcqa.ask.projection")


def test_the_page_explains_the_current_example_on_a_click_with_progress_and_compares_its_layers():
    app = open_app(query={"ex": "orchard-how-many"})
    app.switch_page(PAGE).run()
    assert not app.exception
    assert "rcqa.ticket" not in app.session_state and not app.get("progress")  # a visit queues nothing
    explain(app)
    assert app.get("progress")[0].proto.text.startswith("layer 4/4 done")
    jsd = spec_titled(app, "How differently layers spread their attribution")
    matrix = values(jsd["data"][0]["z"])
    assert matrix.shape == (4, 4) and np.allclose(matrix, matrix.T) and np.allclose(np.diag(matrix), 0)
    assert "(whole distributions)" in jsd["layout"]["title"]["text"]

    app.radio(key="rcqa.widget.variant").set_value("topk_kept").run()
    assert "only each layer's top-5 words kept" in spec_titled(app, "How differently")["layout"]["title"]["text"]
    assert app.query_params["jsd"] == "topk_kept"

    assert app.selectbox(key="rcqa.widget.second_layer").value == 3  # the last layer, against the embeddings
    spec_titled(app, "Comparing two layers: embeddings and block 2")
    app.selectbox(key="rcqa.widget.first_layer").set_value(1).run()
    pair = spec_titled(app, "Comparing two layers: block 0 and block 2")
    first, second, difference = (values(trace["y"]) for trace in pair["data"])
    assert np.allclose(difference, second - first)

    assert not any(s["layout"]["title"]["text"].startswith("Token vectors") for s in plotly_specs(app))
    tsne = spec_titled(map_layer(app), "Token vectors at block 2: t-SNE")
    assert {trace["name"] for trace in tsne["data"]} <= {"answer", "[CLS]/[SEP]", "question", "answer sentence",
                                                         "other"}
    assert "customdata[0]" in tsne["data"][0]["hovertemplate"]
    app.radio(key="rcqa.widget.projection").set_value("pca").run()
    app.selectbox(key="rcqa.widget.projection_layer").set_value(2).run()
    pca = spec_titled(map_layer(app), "Token vectors at block 1: PCA")
    assert re.fullmatch(r"Principal component 1 \(\d+% of variance\)", pca["layout"]["xaxis"]["title"]["text"])
    assert {trace["name"]: trace["marker"]["color"] for trace in pca["data"]}["[CLS]/[SEP]"] == "#111111"


def test_a_link_opens_the_chosen_layers_and_keeps_the_explore_page_settings():
    app = open_app(query={"ex": "river-where", "k": "3", "first": "1", "second": "9", "maplayer": "2", "map": "pca"})
    explain(app.switch_page(PAGE).run())
    assert app.selectbox(key="rcqa.widget.first_layer").value == 1
    assert app.selectbox(key="rcqa.widget.second_layer").value == 3  # a layer this model lacks: its last
    spec_titled(map_layer(app), "Token vectors at block 1: PCA")
    assert "top-3" in " ".join(app.radio(key="rcqa.widget.variant").options)
    assert (app.query_params["second"], app.query_params["k"]) == ("3", "3")


def test_two_layers_by_sentence_draw_each_sentences_shares_and_the_sentence_reads_the_chart():
    app = open_app(query={"ex": "lighthouse-who", "first": "0", "second": "3", "pairby": "sentence"}, page=PAGE)
    explain(app)
    assert app.radio(key="rcqa.widget.pair_units").value == "sentence"
    chart = spec_titled(app, "Comparing two layers by sentence: embeddings and block 2")
    first, second, difference = (values(trace["x"]).astype(float) for trace in chart["data"])
    assert len(first) == 4 and np.allclose(first.sum(), 100) and np.allclose(second.sum(), 100)
    assert np.allclose(second - first, difference)
    shown = [re.sub(r"\\(.)", r"\1", str(m.value)) for m in app.markdown]  # show.plain's escapes taken out
    assert (f"From embeddings to block 2, sentence #{int(np.argmax(difference)) + 1} gains most "
            f"({difference.max():+.1f} points) and #{int(np.argmin(difference)) + 1} loses most "
            f"({difference.min():+.1f} points).") in shown
    app.radio(key="rcqa.widget.pair_units").set_value("word").run()
    assert app.query_params["pairby"] == "word"  # the choice lives in the link
    spec_titled(app, "Comparing two layers: embeddings and block 2")
