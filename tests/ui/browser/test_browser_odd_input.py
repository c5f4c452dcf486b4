"""In a real browser (issue 61, findings 11 and 12): a long gallery passage's box opens on its answer, a pasted
passage of one 20,000-character word keeps the page a sane height (before: past 16,000 px), and a German paste is
said to be mostly words the model does not know."""
from __future__ import annotations

from tests.helpers.browser import paste, settle, shoot

ONE_WORD = "x" * 20_000
MOST_PX = 4_000  # the page's content with the answer, the passage and the n-best list; before: over 16,000 px


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


def test_a_german_passage_and_question_are_said_to_be_mostly_unfamiliar_words(server, page):
    """Finding 12: an English model reads German in known pieces, so no token is [UNK]; the page says that most of
    the words are not in its vocabulary (rcqa.qa.unfamiliar_words) under the answer."""
    page.goto(f"{server}/")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    paste(page, "Der Leuchtturm wurde im Jahr 1874 von der Ingenieurin Margaret Ellison entworfen. Er steht auf "
          "einer felsigen Landzunge und warnt seitdem die Schiffe vor den gefährlichen Untiefen der Bucht.",
          "Wer hat den Leuchtturm entworfen?")
    page.get_by_text("Most of the question's and the passage's words are not in the model's vocabulary",
                     exact=False).first.wait_for(timeout=120_000)
    shoot(page, "odd-input-03-german")
