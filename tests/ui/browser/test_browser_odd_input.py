"""In a real browser (issue 61, findings 11 and 12): a long gallery passage's box opens on its answer, and a pasted
passage of one 20,000-character word keeps the page a sane height (before: past 16,000 px)."""
from __future__ import annotations

import pytest

from tests.helpers.browser import paste, serve, settle, shoot

ONE_WORD = "x" * 20_000
MOST_PX = 4_000  # the page's content with the answer, the passage and the n-best list; before: over 16,000 px


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from serve(tmp_path_factory.mktemp("odd-input"))


def test_a_long_passage_opens_on_its_answer(server, page):
    page.goto(f"{server}/?ex=canal-long")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    box = page.locator("div[style*='max-height: 24em']").filter(has=page.locator("mark")).first
    box.scroll_into_view_if_needed()
    shoot(page, "odd-input-01-canal-long")
    shown, answer = box.bounding_box(), box.locator("mark").first.bounding_box()
    assert box.evaluate("element => element.scrollTop") == 0  # no script scrolled it: it opens there
    assert shown["y"] <= answer["y"] and answer["y"] + answer["height"] <= shown["y"] + shown["height"]
    page.get_by_text("before the answer: click to show them").first.click()  # the words before, in place
    page.get_by_text("The Grand Western Canal Company was formed in 1796").first.wait_for()


def test_a_one_word_passage_keeps_the_page_a_sane_height(server, page):
    page.goto(f"{server}/")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    paste(page, ONE_WORD, "What is it?")
    page.get_by_text("(20,000 characters)").first.wait_for(timeout=120_000)
    settle(page, after_action=False)
    shoot(page, "odd-input-02-one-word")
    height = page.locator("[data-testid=stMainBlockContainer]").bounding_box()["height"]
    assert height < MOST_PX, f"the page is {height:.0f} px tall"
