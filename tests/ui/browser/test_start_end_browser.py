"""In a real browser: a link with Start and end apart opens apart, and one click explains the start and end logits
beside the answer, both charts drawn with both completeness figures. The screenshot lands beside test_browser's."""
from __future__ import annotations

import re

from tests.helpers.browser import SCREENSHOTS, explain_every_layer, settle, shoot, wait_for_chart


def test_a_link_with_apart_draws_the_start_and_end_charts(server, page):
    page.goto(f"{server}/?ex=comet-who&ends=apart&steps=2&tol=off")  # a short fixed rule: a busy CPU is slow
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    assert page.get_by_role("radio", name=re.compile("^apart")).is_checked()
    page.get_by_text("and its start and end logits apart").first.wait_for()
    explain_every_layer(page, "start-end-01-apart-link")
    wait_for_chart(page, "Start and end apart")
    charts = page.locator("[data-testid=stPlotlyChart]")
    apart = charts.filter(has_text="Start and end apart")
    assert apart.count() == 1
    for title in ("Start logit", "End logit"):  # the two heatmaps' subplot titles, drawn in the SVG
        assert apart.locator("text.annotation-text", has_text=title).count() == 1
    assert apart.locator("g.hm").count() == 2  # two heatmap layers on one word axis
    charts.filter(has_text="Where each layer's attribution goes").first.wait_for()  # the joined view stays
    metrics = page.locator("[data-testid=stMetric]")
    assert metrics.count() == 2
    assert re.search(r"Start logit: completeness error.*\n?[0-9.]+%", metrics.nth(0).inner_text(), re.S)
    page.get_by_text("each logit rests on its own token by construction", exact=False).first.wait_for()
    assert "ends=apart" in page.url
    metrics.first.scroll_into_view_if_needed()  # Streamlit scrolls inside its own container
    shoot(page, "start-end-02-apart")
    apart.screenshot(path=str(SCREENSHOTS / "start-end-03-apart-chart.png"))
