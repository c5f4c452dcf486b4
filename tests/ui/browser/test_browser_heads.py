"""In a real browser: the heads view of the lighthouse question on the default model, asked for in Explore's
"Attention heads" tab, with a head chosen from a link; the screenshot shows the grid, its sentences and the head's
attention."""
from __future__ import annotations

from tests.helpers.browser import SCREENSHOTS, explain_every_layer, settle, shoot


def test_the_heads_tab_scores_every_head_and_shows_the_chosen_one(server, page):
    page.goto(f"{server}/?ex=lighthouse-who&method=attnlrp&hlayer=4&head=2")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)  # a busy CPU loads the model slowly
    settle(page, after_action=False)
    explain_every_layer(page, "heads-01-explained")
    page.get_by_role("tab", name="Attention heads").click()
    settle(page)
    page.get_by_role("button", name="Score every attention head").click()
    page.get_by_text("How each score ranks").wait_for(timeout=300_000)
    settle(page)
    page.get_by_text("Each head knocked out: change in log p(span)").wait_for()
    page.get_by_text("block 4, head 2: attention over the passage").wait_for()
    page.wait_for_timeout(1500)  # Plotly draws a tab's chart when it becomes visible
    shoot(page, "heads-02-view")
    page.get_by_text("What one head does").scroll_into_view_if_needed()  # the app scrolls inside its own container
    page.wait_for_timeout(1000)
    page.screenshot(path=str(SCREENSHOTS / "heads-03-head.png"))
    assert "hlayer=4" in page.url and "head=2" in page.url
