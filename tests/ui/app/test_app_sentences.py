"""The Explore page's sentences beside the layer roles and the interventions read the numbers their charts draw on
the page: each sentence, as shown, is parsed and checked against the chart's bars as sent to the browser
(tests/helpers/sentences.py), on gallery examples."""
import re

import numpy as np
import pytest

from tests.helpers.app_harness import explain, open_app, open_tab, press, spec_titled, values
from tests.helpers.sentences import check_knockout_reading, check_role_readings, legend_role

pytestmark = pytest.mark.usefixtures("app_env")
LAYERS = ["embeddings", "block 0", "block 1", "block 2"]


def shown_readings(app) -> list[tuple[str, str]]:
    """The roles readings as the page writes them: **Early (embeddings–block 0)**: …"""
    found = [re.fullmatch(r"\*\*(.+?)\*\*: (.+)", str(m.value), re.S) for m in app.markdown]
    return [(m[1], m[2]) for m in found if m and m[1].split(" ")[0] in ("Early", "Middle", "Late")]


def unescaped(text: str) -> str:
    """A sentence as shown: show.plain's escapes (a backslash before markup) and word joiners taken out."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


@pytest.mark.parametrize("example", ["orchard-how-many", "lighthouse-who"])
def test_the_roles_readings_and_the_knock_out_sentence_read_their_charts(example):
    app = open_tab(explain(open_app(query={"ex": example})), "Layer roles")
    roles = spec_titled(app, "What each layer's top-5 passage words are")
    stacks = {legend_role(trace["name"]): list(values(trace["y"])) for trace in roles["data"]}
    readings = shown_readings(app)
    assert [phase.split(" ")[0] for phase, _ in readings] == ["Early", "Middle", "Late"]
    check_role_readings(readings, stacks, LAYERS)

    press(open_tab(app, "Interventions"), "rcqa.ask.knockouts")
    chart = spec_titled(app, "How the explained span's probability changes")
    bars = {trace["name"]: list(values(trace["y"])) for trace in chart["data"]}
    against = [hover[2] for hover in chart["data"][0]["customdata"]]
    sentence = unescaped(next(c.value for c in app.caption if re.match(r"\S*(No knock-out|Knocking out)",
                                                                       unescaped(c.value))))
    check_knockout_reading(sentence, bars, ["" if words == "none" else words for words in against])
    assert "<br>" not in chart["layout"]["title"]["subtitle"]["text"]  # one line of settings, no sentence pasted in
    assert "knock-out" not in chart["layout"]["title"]["subtitle"]["text"].lower()


def test_the_sentence_check_against_the_model_says_what_its_chart_draws():
    """Sentences tab: the model re-answers without each sentence (and on random halves, for ContextCite); the
    sentences under the chart name the context sentence whose deletion costs most, and the one the explanation puts
    first at the layer the chart shows, with the drops the chart draws for them."""
    app = open_tab(explain(open_app(query={"ex": "lighthouse-who"})), "Sentences")
    press(app, "rcqa.ask.sentence_evidence")
    app.select_slider(key="rcqa.widget.layer").set_value(0).run()  # the embeddings: IG scores the context there
    chart = spec_titled(app, "What the model says of each sentence")
    panels = {trace["name"]: values(trace["x"]).astype(float) for trace in chart["data"]}
    labels = list(values(chart["data"][0]["y"]))
    context = np.array([n for n, label in enumerate(labels) if not str(label).startswith("▶")])
    assert len(context) == 3  # one of the lighthouse's four sentences holds the answer
    lost = panels["Probability lost when deleted"]
    said = [unescaped(str(m.value)) for m in app.markdown]
    most = context[np.argmax(lost[context])]
    assert (f"Deleting sentence #{most + 1} lowers the answer's probability most among the context sentences "
            f"({lost[most]:+.3f}); a random context sentence lowers it by {lost[context].mean():+.3f} on average."
            ) in said
    (share_panel,) = [name for name in panels if name.startswith("Share at ")]
    layer, shares = share_panel.removeprefix("Share at ").removesuffix(" (%)"), panels[share_panel]
    assert layer == "embeddings" and (shares[context] > 0).all()
    top = context[np.argmax(shares[context])]
    assert any(s.startswith("At embeddings, ") and f"puts sentence #{top + 1} first among the context sentences; "
               f"deleting it lowers the answer's probability by {lost[top]:+.3f}" in s for s in said), said


def test_a_long_passages_evidence_opens_the_heatmap_at_the_sentences_words():
    """Explained whole, the lighthouse's words page on the heatmap: the Sentences tab offers the sentences the layer
    rests on most, largest share first, and each opens the Heatmap tab on the page that shows its first word."""
    from rcqa.figures import PAGE_WORDS

    app = open_tab(explain(open_app(query={"ex": "lighthouse-who", "win": "all"})), "Sentences")
    units = spec_titled(app, "Which sentence each layer rests on")["data"][0]
    shares = values(units["z"]).astype(float)[:, 0]  # units × layers: the embeddings, the view's layer
    offered = [button for button in app.button if button.key.startswith("rcqa.evidence.")]
    assert [int(b.key.rsplit(".", 1)[1]) for b in offered] == list(np.argsort(-np.abs(shares))[:3] + 1)
    for key in [button.key for button in offered]:
        label = app.button(key=key).label
        opening = unescaped(label).split(" · ", 2)[2].split()[:3]  # the sentence's first three words
        press(app, key)
        assert app.session_state["rcqa.explore_tabs"] == "Heatmap"
        heatmap = spec_titled(app, "Where each layer's attribution goes")
        words = [str(cell[0]) for cell in values(heatmap["data"][0]["customdata"])[0]]
        low, high = heatmap["layout"]["xaxis"]["range"]
        assert high - low == PAGE_WORDS  # the heatmap pages
        start = int(low + 0.5)
        page = words[start:start + PAGE_WORDS]
        assert any(page[i:i + 3] == opening for i in range(len(page) - 2)), (opening, start)  # on the page shown
        open_tab(app, "Sentences")
