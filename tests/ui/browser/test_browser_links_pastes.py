"""In a real browser (issues 41.10, 41.9): the heatmap's toggles travel in the page's link and a new page opened on it
shows them as they were; a ~3,000-word paste is shown in a box of its own height, so that the controls stay near the
top, a whole passage over the server's budget is refused with the CLI and a dataset run as the way to explain it, and
a cancelled explanation says "Cancelled." where its result would be. Screenshots land beside test_browser's."""
from __future__ import annotations

import re

import pytest

from tests.helpers.browser import paste, serve, settle, shoot, wait_for_chart, wait_for_chart_text

QUICK = "steps=4&tol=off"  # an explanation of a few seconds: the toggles, not IG, are under test
# about 3,000 words in 52 paragraphs, each naming its number: the answer to the question is in the 37th
LONG_PASSAGE = "\n\n".join(
    f"Paragraph {n} tells of the harbour town of Varn{n}, where the fishers mend their nets by the grey wall. "
    + "The tide comes in slowly over the flats and the gulls call from the roofs of the old sheds. " * 2
    + (f"The lighthouse of Varn{n} was built by Ada Merrow in 1821." if n == 37 else "")
    for n in range(1, 53))
BUDGET_SECONDS = 90  # the answer's window fits one job, every window of the long paste does not


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from serve(tmp_path_factory.mktemp("links"), RCQA_JOB_BUDGET_S=str(BUDGET_SECONDS))


def toggle(page, label: str):
    return page.locator("label", has_text=label).locator("input")


def test_the_heatmaps_toggles_travel_in_the_link_to_a_new_page(server, page, browser):
    page.goto(f"{server}/?ex=lighthouse-who&{QUICK}")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    page.get_by_role("button", name="Explain every layer").click()
    wait_for_chart(page, "Where each layer's attribution goes")
    settle(page)
    for label in ("Include the question's words", "Include [CLS] and [SEP]"):
        page.get_by_text(label).click()
        settle(page)
    assert "qwords=on" in page.url and "special=on" in page.url
    reopened = browser.new_context(viewport={"width": 1400, "height": 2600}).new_page()
    reopened.goto(page.url)
    reopened.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(reopened, after_action=False)
    if reopened.get_by_role("button", name="Explain every layer").count():  # a new session: from the result cache
        reopened.get_by_role("button", name="Explain every layer").click()
    wait_for_chart(reopened, "Where each layer's attribution goes")
    settle(reopened)
    shoot(reopened, "links-01-toggles-reopened")
    assert toggle(reopened, "Include the question's words").is_checked()
    assert toggle(reopened, "Include [CLS] and [SEP]").is_checked()
    wait_for_chart_text(reopened, "question words, then passage words, with [CLS] and [SEP]")
    reopened.context.close()


def test_a_long_paste_stays_in_its_box_is_refused_whole_with_the_cli_and_can_be_cancelled(server, page):
    page.goto(server)
    settle(page, after_action=False)
    paste(page, LONG_PASSAGE, "Who built the lighthouse of Varn37?")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page)
    page.get_by_text(f"A long passage ({len(LONG_PASSAGE.split()):,} words").first.wait_for()
    explain = page.get_by_role("button", name="Explain every layer")
    shoot(page, "pastes-01-long-passage")
    assert explain.bounding_box()["y"] < 2000  # two screens at most; before: below ~6,000 px of passage
    page.get_by_role("radio", name=re.compile("the whole passage")).click(force=True)
    settle(page)
    page.get_by_text("python -m rcqa explain", exact=False).first.wait_for()
    refusal = page.locator("[data-testid=stAlert]").filter(has_text="allows one job").inner_text()
    assert "--windows all" in refusal and "python -m rcqa reproduce" in refusal
    shoot(page, "pastes-02-whole-passage-refused")
    page.get_by_role("radio", name=re.compile("the answer's window")).click(force=True)
    settle(page)
    page.get_by_role("button", name="Explain every layer").click()
    page.get_by_role("button", name="Cancel").click(timeout=60_000)
    page.get_by_text("Cancelled.", exact=True).wait_for(timeout=60_000)
    settle(page)
    shoot(page, "pastes-03-cancelled")
    assert page.get_by_role("button", name="Explain every layer").count() == 1
