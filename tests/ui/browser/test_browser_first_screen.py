"""The first screen is the paper's figure (issue 61): Explore opens, at 1440×900 and without a click or a scroll, on
the answer and every layer's heatmap of each gallery example (their explanations ship with the package:
rcqa.attribution.shipped), with the controls that change it beside it; at 800 px the layout holds."""
from __future__ import annotations

from rcqa.gallery import GALLERY
from tests.helpers.browser import SCREENSHOTS, settle, wait_for_chart

SCREEN = {"width": 1440, "height": 900}
NARROW = {"width": 800, "height": 1000}


def shot_path(name: str):
    """Where a first screen's picture lands, as it was seen (the viewport, not the whole page)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{name}.png"


def open_example(page, server: str, example_id: str) -> None:
    page.goto(f"{server}/?ex={example_id}")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)  # a busy CPU loads the model slowly
    settle(page, after_action=False)
    wait_for_chart(page, "at a glance" if example_id == "canal-long" else "Where each layer's attribution goes")


def in_view(page, locator, height: int) -> bool:
    box = locator.bounding_box()
    return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height


def test_a_cold_servers_first_page_says_what_is_loading_before_it_can_draw(server, browser):
    # first in this module, whose server is new: its first page imports torch and transformers and loads the model
    page = browser.new_context(viewport=SCREEN).new_page()
    page.goto(server, wait_until="commit")
    loading = page.get_by_text("loading the explanation engine and the model", exact=False)
    loading.wait_for(timeout=30_000)
    assert page.get_by_text("The model's answer", exact=True).count() == 0  # said before anything is drawn
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    assert loading.count() == 0  # and gone once the page is drawn
    page.context.close()


def test_every_gallery_example_opens_on_its_answer_and_every_layer_without_a_click_or_a_scroll(server, browser):
    context = browser.new_context(viewport=SCREEN)
    page = context.new_page()
    for example in GALLERY:
        open_example(page, server, example.id)
        assert page.get_by_role("button", name="Explain every layer").count() == 0, example.id
        assert in_view(page, page.get_by_text("The model's answer", exact=True), SCREEN["height"]), example.id
        # the first chart's cells, every layer's row of them, on the screen as it opens
        cells = page.locator("[data-testid=stPlotlyChart] .nsewdrag").first
        assert in_view(page, cells, SCREEN["height"]), example.id
        rows = page.locator("[data-testid=stPlotlyChart]").first.locator(".yaxislayer-above .ytick")
        assert rows.count() == 7, example.id  # the embeddings and the default model's 6 blocks
        # the controls that change the explanation stand beside it
        assert in_view(page, page.get_by_text("Method", exact=True).first, SCREEN["height"]), example.id
        if example.id == "lighthouse-who":
            page.screenshot(path=str(shot_path("first-screen-1440")))
    context.close()


def test_at_800_px_the_first_screen_holds_without_a_sideways_scroll(server, browser):
    context = browser.new_context(viewport=NARROW)
    page = context.new_page()
    open_example(page, server, "lighthouse-who")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= NARROW["width"]
    assert page.locator("[data-testid=stSidebar]").count() == 0  # the pages are named along the top
    assert in_view(page, page.locator("[data-testid=stPlotlyChart] .nsewdrag").first, NARROW["height"])
    page.screenshot(path=str(shot_path("first-screen-800")))
    context.close()
