"""In a real browser: a contrast from a link explained on the default model, down to the layer roles that name the
foil and say where the answer first beats it. Screenshots land beside test_browser's."""
from __future__ import annotations

from tests.helpers.browser import explain_every_layer, settle, shoot


def test_a_contrast_from_a_link_shows_the_foil_and_the_lens_sentence(server, page):
    # a fixed rule of 4 steps: the foil and the lens's sentence are what this checks, not IG's convergence
    page.goto(f"{server}/?ex=bridge-how-many&contrast=distractor-number&steps=4&tol=off")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)  # a busy CPU loads the model slowly
    settle(page, after_action=False)
    page.get_by_text("Attributes why the answer and not the best-scoring other number").wait_for()
    explain_every_layer(page, "contrast-01-heatmap")  # two targets at every layer
    page.get_by_role("tab", name="Layer roles").click()
    page.get_by_text("On the lens the").wait_for(timeout=90_000)
    page.get_by_text("Contrast: log p(answer) − log p(foil)").wait_for()
    page.wait_for_timeout(1500)  # Plotly draws a tab's chart when it becomes visible
    shoot(page, "contrast-02-roles")
    assert "contrast=distractor-number" in page.url and "steps=4" in page.url
