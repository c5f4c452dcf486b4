"""In a real browser: the whole passage of the long gallery example (two windows) from a link, explained on the
default model down to a heatmap whose word axis pages over every window's words. Screenshots land beside
test_browser's."""
from __future__ import annotations

from tests.helpers.browser import explain_every_layer, settle, shoot


def test_a_whole_passage_from_a_link_is_explained_over_every_window(server, page):
    # a fixed rule of 4 steps: what is checked here is the whole passage's windows, not IG's convergence (the
    # default rule took this test 6 minutes on busy cores)
    page.goto(f"{server}/?ex=canal-long&win=all&steps=4&tol=off")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)  # a busy CPU loads the model slowly
    settle(page, after_action=False)
    page.get_by_text("the whole passage (2 windows: about 2× the time)").wait_for()
    page.get_by_text("over all 2 windows of the passage").first.wait_for()
    explain_every_layer(page, "passage-01-heatmap")
    # the heatmap pages over the passage: a range slider under its word axis, whose words run past the first window
    assert page.locator("[data-testid=stPlotlyChart] .rangeslider-container").count() >= 1
    page.get_by_text("the whole passage, 2 windows").first.wait_for()
    page.get_by_role("tab", name="Top-5 words").click()
    page.wait_for_timeout(1500)  # Plotly draws a tab's chart when it becomes visible
    shoot(page, "passage-02-top-k")
    assert "win=all" in page.url and "steps=4" in page.url
