"""In a real browser (issue 61): the long gallery passage's window explained on the default model under the signed
token score (a link with agg=sum): the heatmap's colour bar diverges (red below 0, blue above, its title a signed
share), the overview above it names the window it covers, and none of its drawn labels overlaps another. The
screenshot lands beside test_browser's."""
from __future__ import annotations

import itertools
import re

from tests.helpers.browser import SCREENSHOTS, explain_every_layer, settle

# the colour bar of the first chart whose text holds `title`: its texts, and its gradient's stop colours
COLOUR_BAR = """title => {
    const chart = Array.from(document.querySelectorAll('[data-testid=stPlotlyChart]'))
        .find(c => c.innerText.includes(title));
    return {texts: Array.from(chart.querySelectorAll('.colorbar text')).map(t => t.textContent),
            stops: Array.from(chart.querySelectorAll('linearGradient stop')).map(s => s.getAttribute('stop-color'))};
}"""
# the boxes (left, top, right, bottom) of the cell labels the first chart whose text holds `title` draws
LABEL_BOXES = """title => {
    const chart = Array.from(document.querySelectorAll('[data-testid=stPlotlyChart]'))
        .find(c => c.innerText.includes(title));
    return Array.from(chart.querySelectorAll('g.heatmap-label text')).map(t => t.getBoundingClientRect())
        .filter(box => box.width > 0).map(box => [box.left, box.top, box.right, box.bottom]);
}"""


def rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", colour)[:3])


def test_a_signed_token_score_draws_a_diverging_heatmap_under_an_overview_of_its_window(server, page):
    page.goto(f"{server}/?ex=canal-long&agg=sum&steps=2&tol=off")  # a short fixed rule: a busy CPU is slow
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)
    settle(page, after_action=False)
    explain_every_layer(page, "figures-01-signed-heatmap")
    bar = page.evaluate(COLOUR_BAR, "Where each layer's attribution goes")
    assert any(text.startswith("Signed share") for text in bar["texts"])  # the title's lines are one text
    assert any(text.startswith("−") for text in bar["texts"])  # ticks below 0
    colours = [rgb(stop) for stop in bar["stops"]]
    assert any(red > blue + 100 for red, _, blue in colours) and any(blue > red + 100 for red, _, blue in colours)
    overview = page.get_by_text(re.compile(r"^Window \d+ of \d+ at a glance"))
    overview.first.wait_for()  # the passage has two windows: the overview covers the one explained
    boxes = page.evaluate(LABEL_BOXES, "at a glance")
    assert boxes  # the window's 200-odd words in a few blocks: labels fit, and are drawn
    for first, second in itertools.combinations(boxes, 2):
        assert first[2] <= second[0] or second[2] <= first[0] or first[3] <= second[1] or second[3] <= first[1]
    page.locator("[data-testid=stPlotlyChart]").filter(has_text="at a glance").first.screenshot(
        path=str(SCREENSHOTS / "figures-02-overview.png"))
