"""In a real browser, issue 41's views on the default model and the orchard (69 passage words, a page and 9 words):
the answer lens read on a click stays on its tab, the heatmap opens on the passage's first word with no overview of
two pages above it, the n-best answers show whole, the side-by-side word axis says how much of the passage it shows
and pages over it, a side by side against the gold span the model answered says so without a job, and the model's
facts show whole. Screenshots land beside test_browser's."""
from __future__ import annotations

from rcqa.figures.words import PAGE_WORDS
from tests.helpers.browser import chart_text_count, explain_every_layer, settle, shoot, wait_for_chart

# how many of the elements matched are cut: their text is wider than the box that shows it
CUT = """selector => Array.from(document.querySelectorAll(selector))
    .filter(cell => cell.scrollWidth > cell.clientWidth + 1).map(cell => cell.innerText)"""
# the x tick labels of the first chart titled so that the page shows: centred over the plot
SHOWN_TICKS = """title => {
    const chart = Array.from(document.querySelectorAll('[data-testid=stPlotlyChart]'))
        .find(c => c.innerText.includes(title));
    const plot = chart.querySelector('.cartesianlayer .bg, .nsewdrag').getBoundingClientRect();
    return Array.from(chart.querySelectorAll('.xtick text')).filter(t => {
        const box = t.getBoundingClientRect(), middle = (box.left + box.right) / 2;
        return box.width > 0 && middle >= plot.left && middle <= plot.right;
    }).map(t => t.textContent);
}"""


def opened(page, url: str) -> None:
    page.goto(url)
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)  # a busy CPU loads the model slowly
    settle(page, after_action=False)


def selected_tab(page) -> list[str]:
    return page.locator("[role=tab][aria-selected=true]").all_inner_texts()


def test_the_answer_lens_read_just_after_an_explanation_stays_on_its_tab(server, page):
    opened(page, f"{server}/?ex=orchard-how-much")
    explain_every_layer(page, "first-hour-01-explained")
    # the first click after an explanation (its status box above the tabs is gone on the next run)
    page.get_by_role("tab", name="Answer lens").click()
    settle(page)
    page.get_by_role("button", name="Read the answer out of every layer").click()
    settle(page)
    page.get_by_text("What each layer would answer").first.wait_for(timeout=120_000)
    settle(page, after_action=False)
    shoot(page, "first-hour-02-answer-lens")
    assert selected_tab(page) == ["Answer lens"]
    assert page.get_by_text("What each layer would answer").first.is_visible()


def test_the_orchard_heatmap_opens_on_its_first_word_under_whole_nbest_answers(server, page):
    opened(page, f"{server}/?ex=orchard-how-many")
    page.get_by_role("cell", name="1,450 are apple trees, 600", exact=True).wait_for()  # the n-best answers, drawn
    assert page.evaluate(CUT, "table td") == []  # and each whole
    explain_every_layer(page, "first-hour-03-orchard-heatmap")
    assert page.get_by_text("The whole passage at a glance").count() == 0  # 69 words: no two-page overview
    ticks = page.evaluate(SHOWN_TICKS, "Where each layer's attribution goes")
    assert ticks[:3] == ["The", "Hollins", "family"] and len(ticks) == PAGE_WORDS  # it opens on the first word
    assert chart_text_count(page, f"{PAGE_WORDS} of its 69 words at a time") >= 1


def test_side_by_side_pages_the_orchard_and_refuses_to_set_the_answer_against_itself(server, page):
    page.goto(f"{server}/side_by_side?ex=orchard-how-many&vs=gold")  # the default model answers 600, the gold span
    page.get_by_text("A and B would be the same explanation").wait_for(timeout=300_000)  # said without a click
    page.get_by_role("radiogroup").first.wait_for()  # what B is, still to choose
    settle(page, after_action=False)
    shoot(page, "first-hour-04-side-by-side-same")
    assert page.get_by_text("A and B would be the same explanation").count() == 1
    assert page.get_by_role("button", name="Explain both").count() == 0
    page.goto(f"{server}/side_by_side?ex=orchard-how-many&vs=foil:runner-up")  # both shipped: drawn without a click
    page.get_by_text("Two explanations side by side: each layer's share").first.wait_for(timeout=600_000)
    settle(page)
    wait_for_chart(page, "How differently the two explanations spread")
    page.wait_for_timeout(1500)
    shoot(page, "first-hour-05-side-by-side-paged")
    assert chart_text_count(page, f"{PAGE_WORDS} of its 69 words at a time: drag the slider below to scroll") == 1
    assert page.locator("[data-testid=stPlotlyChart] .rangeslider-container").count() >= 1


def test_the_models_facts_show_whole(server, page):
    page.goto(f"{server}/model")
    page.get_by_text("The model in use", exact=True).wait_for(timeout=300_000)
    page.get_by_text("layer adapter", exact=True).wait_for(timeout=120_000)  # a static table: its cells are text
    settle(page, after_action=False)
    shoot(page, "first-hour-06-model")
    adapter = page.locator("table tr").filter(has_text="layer adapter")
    assert adapter.count() == 1 and "blocks" in adapter.inner_text()  # its description is on the page, as text
    assert page.evaluate(CUT, "table td, table th") == []
