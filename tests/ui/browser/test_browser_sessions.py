"""Several people at once on one `streamlit run app.py`: each browser session explains its own gallery example
while the others do, and each gets its own answer and its own heatmap, with no exception on any page."""
from __future__ import annotations

import pytest

from tests.helpers.browser import serve, settle, shoot

# each example's answer by the embedded model: none of them occurs in another example's passage
ANSWERS = {"lighthouse-who": "Margaret Ellison", "comet-who": "Priya Raman", "marathon-who": "Daniel Mwangi",
           "river-where": "Morrow Hills"}
HEATMAP = "Where each layer's attribution goes"


# one explanation at a time, as on a 2-core CPU, whatever this machine has: the rest must queue
ONE_WORKER = {"RCQA_EXPLAIN_WORKERS": "1"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from serve(tmp_path_factory.mktemp("one-worker"), **ONE_WORKER)


def heatmap_words(page) -> set[str]:
    """The words on the heatmap's x axis (the analysed window's passage words)."""
    chart = page.locator("[data-testid=stPlotlyChart]").filter(has_text=HEATMAP).first
    chart.locator(".xtick").first.wait_for(timeout=240_000)
    return {tick.strip() for tick in chart.locator(".xtick text").all_text_contents()}


def test_concurrent_sessions_each_get_their_own_answer_and_heatmap(server, browser):
    contexts = [browser.new_context(viewport={"width": 1400, "height": 2600}) for _ in ANSWERS]
    try:
        pages = {example: context.new_page() for example, context in zip(ANSWERS, contexts)}
        for example, page in pages.items():
            # not the shipped explanations': each is a job (a fixed rule: what is checked is whose answer each
            # session gets, not IG's convergence)
            page.goto(f"{server}/?ex={example}&steps=4&tol=off")
        for example, page in pages.items():
            settle(page, after_action=False)
            summary = page.locator("[data-testid=stMarkdown]").filter(has_text="probability").first
            assert ANSWERS[example] in summary.inner_text()
        for page in pages.values():  # every request is in before the first finishes
            page.get_by_role("button", name="Explain every layer").click()
        last = pages[list(ANSWERS)[-1]]  # one explanation runs at a time here: the last waits, and says so
        last.get_by_text("ahead of yours").wait_for(timeout=60_000)
        assert last.get_by_role("button", name="Cancel").count() == 1
        for example, page in pages.items():
            words = heatmap_words(page)
            others = " ".join(answer for other, answer in ANSWERS.items() if other != example).split()
            assert set(ANSWERS[example].split()) <= words and not words & set(others), (example, words)
            settle(page)
            assert f"ex={example}" in page.url
            assert page.locator("[data-testid=stException]").count() == 0
            shoot(page, f"sessions-{example}")
    finally:
        for context in contexts:
            context.close()


@pytest.fixture(scope="module")
def server_with_one_lane(tmp_path_factory):
    """A server without the short lane (RCQA_SHORT_WORKERS=0): a comparison, which the cost model does not estimate
    and so counts as short, would otherwise run beside the long explanation at once (docs/serving.md: The short
    lane; tests/ui/test_lanes.py tests that) instead of waiting where this test can see it."""
    yield from serve(tmp_path_factory.mktemp("one-lane"), RCQA_SHORT_WORKERS="0", **ONE_WORKER)


def test_a_methods_comparison_waits_in_the_same_queue_says_where_and_can_be_cancelled(server_with_one_lane, browser):
    server = server_with_one_lane
    explaining, comparing = (browser.new_context(viewport={"width": 1400, "height": 2000}) for _ in range(2))
    try:
        busy = explaining.new_page()
        busy.goto(f"{server}/?ex=canal-long&steps=4")  # a long explanation, not shipped: the comparison waits for it
        settle(busy, after_action=False)
        page = comparing.new_page()
        page.goto(f"{server}/methods?ex=comet-who")
        settle(page, after_action=False)
        busy.get_by_role("button", name="Explain every layer").click()
        busy.get_by_text("layer 1/").first.wait_for(timeout=60_000)  # running: the queue's one worker is taken
        page.get_by_role("button", name="Compare the methods").click()
        page.get_by_text("1 explanation or comparison ahead of yours").wait_for(timeout=60_000)
        page.get_by_role("button", name="Cancel").click()
        page.get_by_role("button", name="Compare the methods").wait_for(timeout=60_000)
        settle(page)
        assert page.get_by_text("ahead of yours").count() == 0
        assert page.locator("[data-testid=stException]").count() == 0
        heatmap_words(busy)  # the explanation ahead was not disturbed
        assert busy.locator("[data-testid=stException]").count() == 0
    finally:
        explaining.close()
        comparing.close()
