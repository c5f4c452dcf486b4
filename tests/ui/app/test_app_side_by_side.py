"""The side-by-side page: opened from a link or from Explore, it explains both sides through the queue on a click and
draws them on one word axis, with the divergence per layer and each side's roles; its choice lives in the URL."""
import numpy as np
import pytest

from tests.helpers.app_harness import explain, open_app, press, spec_titled, texts, values

pytestmark = pytest.mark.usefixtures("app_env")
PAGE = "pages/side_by_side.py"


def test_a_link_opens_the_predicted_span_against_the_gold_span():
    app = open_app(query={"ex": "orchard-how-many", "vs": "gold"}, page=PAGE)
    assert app.radio(key="rcqa.versus_kind").value == "gold"
    assert "rcqa.ticket" not in app.session_state  # a visit queues nothing
    press(app, "rcqa.explain_pair")
    heatmaps = spec_titled(app, "Two explanations side by side")
    first, second, difference = (values(trace["z"]).astype(float) for trace in heatmaps["data"])
    assert first.shape == second.shape == difference.shape
    assert np.allclose(np.nan_to_num(second) - np.nan_to_num(first), difference)
    assert np.allclose(np.nansum(first, axis=1), 100)  # each side's layer is a distribution over the words
    jsd = values(spec_titled(app, "How differently the two explanations")["data"][0]["y"]).astype(float)
    assert len(jsd) == first.shape[0] and ((0 <= jsd) & (jsd <= 1)).all()
    spec_titled(app, "What each side's top-5 passage words are")
    shown = texts(app.markdown)
    assert "of the answer “" in shown and "**B**" in shown and "of the gold span “600”" in shown
    assert app.query_params["vs"] == "gold"


def test_by_sentence_the_two_sides_line_up_and_the_sentence_reads_the_chart_and_the_units_live_in_the_link():
    app = open_app(query={"ex": "orchard-how-many", "vs": "gold", "gran": "phrase"}, page=PAGE)
    press(app, "rcqa.explain_pair")
    assert app.radio(key="rcqa.widget.granularity").value == "phrase"
    app.radio(key="rcqa.widget.granularity").set_value("sentence").run()
    assert app.query_params["gran"] == "sentence"
    chart = spec_titled(app, "Which sentence each layer rests on, A beside B")
    first, second = (values(trace["z"]).astype(float) for trace in chart["data"])  # sentences × layers, each side
    layers = list(chart["data"][0]["x"])
    same = [int(np.argmax(np.abs(np.nan_to_num(first[:, layer])))) == int(np.argmax(np.abs(np.nan_to_num(
        second[:, layer])))) for layer in range(len(layers))]
    reading = next(str(m.value) for m in app.markdown if "rest most on the same sentence" in str(m.value))
    counted = "every one" if all(same) else str(sum(same))
    assert f"at {counted} of the {len(layers)} layers where both score one" in reading.replace("\\", "")


def test_explore_offers_the_view_and_a_foil_choice_lands_in_the_url():
    app = open_app(query={"ex": "orchard-how-many"})
    explain(app)
    # the tiny model answers 1,450, not the gold 600: the gold span is offered beside another foil and another model
    assert {"rcqa.versus.gold", "rcqa.versus.foil:runner-up"} <= {button.key for button in app.button}
    press(app, "rcqa.versus.foil:runner-up")
    assert app.radio(key="rcqa.versus_kind").value == "foil"
    assert app.query_params["vs"] == "foil:runner-up"
    app.selectbox(key="rcqa.versus_foil").set_value("distractor-number").run()
    assert app.query_params["vs"] == "foil:distractor-number"
    press(app, "rcqa.explain_pair")
    assert "vs “" in texts(app.markdown)  # B is a contrast, named by its foil


def test_a_link_naming_a_model_the_server_does_not_offer_falls_back_in_one_sentence():
    app = open_app(query={"ex": "orchard-how-many", "vs": "model:/etc/evil"})
    warning = texts(app.warning).replace("\\", "")  # the markdown escapes, as the page shows it
    assert "Ignored vs='model:/etc/evil' from the link: compare with gold, model:NAME" in warning
    app.switch_page(PAGE).run()
    assert app.radio(key="rcqa.versus_kind").value == "gold" and app.query_params["vs"] == "gold"
