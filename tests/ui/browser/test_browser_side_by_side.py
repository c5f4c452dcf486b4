"""In a real browser: the side-by-side view opened from a link (the predicted span "90, aged between 11 and 18"
against the gold "90") on the default model, explained on one click down to both heatmaps, their difference and the divergence per layer; then Explore's
whole-input heatmap. Screenshots land beside test_browser's."""
from __future__ import annotations

from tests.helpers.browser import settle, shoot, wait_for_chart


def test_the_side_by_side_view_opens_from_a_link_and_draws_both_explanations(server, page):
    page.goto(f"{server}/side_by_side?ex=choir-how-many&vs=gold")
    page.get_by_text("Two explanations side by side", exact=True).wait_for(timeout=300_000)  # a busy CPU loads slowly
    settle(page, after_action=False)
    shoot(page, "side-by-side-01-link")
    page.get_by_role("button", name="Explain both").click()
    page.get_by_text("Two explanations side by side: each layer's share").first.wait_for(timeout=600_000)
    settle(page)
    wait_for_chart(page, "How differently the two explanations spread")
    page.wait_for_timeout(1500)
    shoot(page, "side-by-side-02-explained")
    assert "vs=gold" in page.url and "ex=choir-how-many" in page.url
    assert page.get_by_text("of the gold span “90”").count() >= 1  # B named above and over its charts
    assert page.get_by_text("the same explanation").count() == 0  # the model missed the gold span: two explanations
    assert page.get_by_text("Traceback").count() == 0
    # the whole input on Explore: [CLS] and [SEP] beside the passage, from the cache
    page.get_by_role("link", name="Explore a question").click()
    settle(page)
    page.get_by_text("Include [CLS] and [SEP]").click()
    settle(page)
    wait_for_chart(page, "Where each layer's attribution goes")
    shoot(page, "side-by-side-03-explore-whole-input")
