"""In a real browser, with the embedded models: the sentences beside the layer roles and the interventions read the
numbers their charts draw (each parsed and checked against the chart's data in the page, tests/helpers/sentences.py)
on the orchard, where the top words outside "600" are the rival numbers; and an abstention's n-best row shows
"no answer"'s score, with [CLS] in the heatmap. Screenshots land beside test_browser's."""
from __future__ import annotations

import re

from tests.helpers.browser import explain_every_layer, settle, shoot
from tests.helpers.sentences import check_knockout_reading, check_role_readings, legend_role

LAYERS = ["embeddings", *(f"block {i}" for i in range(6))]  # the embedded model's
# the data of the Plotly chart whose title starts with `title`, as the page drew it (_fullData: its arrays decoded)
CHART = """(title) => {
    // a word axis is a category axis of positions, each labelled with its word (rcqa.figures.common.word_ticks)
    const words = (axis) => axis.labelalias ? Array.from(axis.categoryarray, p => axis.labelalias[String(p)]) : null;
    const plot = [...document.querySelectorAll('.js-plotly-plot')]
        .find(el => el.layout && el.layout.title && el.layout.title.text.replace(/<[^>]+>/g, '').startsWith(title));
    return plot && {subtitle: plot.layout.title.subtitle.text, xticks: words(plot.layout.xaxis),
                    data: plot._fullData.map(t => ({name: t.name, y: Array.from(t.y),
                                               customdata: t.customdata ? Array.from(t.customdata) : null}))};
}"""


def chart(page, title: str) -> dict:
    page.wait_for_function(f"() => ({CHART})({title!r}) !== undefined", timeout=60_000)
    return page.evaluate(CHART, title)


def texts_of(page, testid: str, pattern: str) -> list[str]:
    return [text for text in page.locator(f"[data-testid={testid}]").all_inner_texts() if re.match(pattern, text)]


def test_the_orchards_sentences_read_their_charts_and_an_abstention_shows_no_answers_score(server, page):
    page.goto(f"{server}/?ex=orchard-how-many")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    explain_every_layer(page, "sentences-01-orchard")

    page.get_by_role("tab", name="Layer roles").click()
    settle(page)  # keyed tabs rerun the page on a click
    page.wait_for_timeout(1500)  # Plotly draws a tab's chart when it becomes visible
    roles = chart(page, "What each layer's top-5 passage words are")
    readings = [re.match(r"((?:Early|Middle|Late) \([^)]*\)): (.*)", text, re.S).groups()
                for text in texts_of(page, "stMarkdownContainer", r"(Early|Middle|Late) \(")]
    assert len(readings) == 3 and "supporting+query" in readings[0][1]  # the stack the chart draws, by its name
    check_role_readings(readings, {legend_role(t["name"]): t["y"] for t in roles["data"]}, LAYERS)
    shoot(page, "sentences-02-roles")

    page.get_by_role("tab", name="Interventions").click()
    settle(page)
    page.get_by_role("button", name="Knock out each layer's words").click()
    settle(page)
    knocked = chart(page, "How the explained span's probability changes")
    page.locator("[data-testid=stCaptionContainer]", has_text=re.compile(r"^(Knocking out|No knock-out)")).first \
        .wait_for(timeout=30_000)
    (sentence,) = texts_of(page, "stCaptionContainer", r"(Knocking out|No knock-out)")
    bars = {t["name"]: t["y"] for t in knocked["data"]}
    check_knockout_reading(sentence, bars, ["" if c[2] == "none" else c[2] for c in knocked["data"][0]["customdata"]])
    assert "“1,450” and “2,300”" in sentence  # the rival numbers, scored against "600"
    assert "<br>" not in knocked["subtitle"]  # one line of settings over the plot
    page.wait_for_timeout(1500)
    shoot(page, "sentences-03-interventions")

    page.goto(f"{server}/?model=default-squad2&ex=library-unanswerable")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    page.get_by_text("No answer: the model abstains").first.wait_for()
    table = page.locator("table").first.inner_text()
    assert "(sum at [CLS])" in table and "nan" not in table
    assert "choose the target" not in page.content()  # its default, answer_vs_null, explains the abstention
    explain_every_layer(page, "sentences-04-abstention")
    assert chart(page, "Where each layer's attribution goes")["xticks"][0] == "[CLS]"
