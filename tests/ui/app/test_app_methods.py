"""The Methods page: it compares the methods on the example chosen on Explore and shows what each one's deletion
test says against random deletion."""
import re

import numpy as np
import pytest

from tests.helpers.app_harness import html_of, open_app, spec_titled, texts, values

pytestmark = pytest.mark.usefixtures("app_env")
PAGE = "pages/methods.py"


def test_the_methods_are_compared_on_the_example_chosen_on_explore():
    app = open_app()
    app.selectbox(key="rcqa.widget.example_id").set_value("comet-who").run()
    app.switch_page(PAGE).run()
    assert "Who was the comet named after?" in html_of(app)
    app.button(key="rcqa.compare_methods").click().run()
    assert not app.exception, [e.value for e in app.exception]

    heatmap = spec_titled(app, "What each method says matters")
    # every method under each of its rankings: signed and magnitude where its scores carry a sign
    assert heatmap["data"][0]["y"] == [
        "Gradient sensitivity, magnitude", "Gradient × input, signed", "Gradient × input, magnitude",
        "Integrated Gradients, signed", "Integrated Gradients, magnitude", "AttnLRP, signed", "AttnLRP, magnitude",
        "Attention tracing, magnitude", "Attention rollout, magnitude", "Random"]
    assert np.allclose(np.abs(values(heatmap["data"][0]["z"])).max(axis=1), 1.0)  # each over its max |score|
    curves = spec_titled(app, "Deleting each method's top-k passage words")
    band = curves["data"][0]
    assert band["name"] == "random: range of 5 draws" and band["fill"] == "toself"
    assert len(curves["data"]) == 2 + 9  # the band, random's mean, one line per method and ranking
    assert all(values(trace["x"]).tolist() == list(range(11)) for trace in curves["data"][1:])
    readings = texts(app.markdown)
    for name in ("Gradient sensitivity, magnitude", "Integrated Gradients, signed", "Attention tracing, magnitude"):
        assert f"**{name}**: Deleting its top-5 words" in readings
    assert "Underlined: the explained span" in html_of(app)
    table = app.dataframe[0].value
    assert {"comprehensiveness", "sufficiency", "AOPC"} <= set(table.columns) and len(table) == 9 + 3  # random: mean, lowest, highest
    # the page opens with the paired verdict; on one question it tells nothing apart, and the one number it quotes
    # is the table's highest AOPC, named by its row
    first = app.markdown[0].value
    assert first.startswith("**On 1 question no two methods are told apart")
    named, quoted = re.search(r"Here (.+?) has the highest AOPC \(([0-9.]+)\)", first.replace("\\", "")).groups()
    methods = table[~table.method.str.startswith("random")]
    best = methods.loc[methods.AOPC.idxmax()]
    assert named == best.method and float(quoted) == pytest.approx(best.AOPC, abs=5e-4)


def test_another_deletion_rule_asks_for_its_own_comparison():
    app = open_app(PAGE)
    app.button(key="rcqa.compare_methods").click().run()
    app.toggle(key="rcqa.spare_answer").set_value(False).run()  # spared by default
    assert "rcqa.compare_methods" in [b.key for b in app.button]  # not computed for this rule yet
    app.button(key="rcqa.compare_methods").click().run()
    assert not app.exception and spec_titled(app, "Deleting each method's top-k")
    app.radio(key="rcqa.deletion_operator").set_value("remove").run()
    assert "rcqa.compare_methods" in [b.key for b in app.button]
