"""In a real browser: the embedded default-squad2 model, opened from a link, abstains on an unanswerable gallery
question, and "Explain every layer" explains the abstention down to layer roles named for it. Screenshots land
beside test_browser's."""
from __future__ import annotations

from tests.helpers.browser import explain_every_layer, settle, shoot


def test_an_abstention_is_said_plainly_and_explained(server, page):
    # a fixed rule of 4 steps: the abstention's explanation is what this checks, not IG's convergence (and no other
    # module's explanation of this question, kept in the shared server's cache, stands in for it)
    page.goto(f"{server}/?model=default-squad2&ex=library-unanswerable&steps=4&tol=off")
    page.get_by_text("The model's answer", exact=True).wait_for(timeout=300_000)  # a busy CPU loads the model slowly
    settle(page, after_action=False)
    page.get_by_text("No answer: the model abstains").first.wait_for()
    shoot(page, "squad2-01-abstains")
    explain_every_layer(page, "squad2-02-heatmap")  # two targets at every layer
    page.get_by_role("tab", name="Layer roles").click()
    page.get_by_text("answer (the rejected best span)").first.wait_for(timeout=90_000)
    page.wait_for_timeout(1500)  # Plotly draws a tab's chart when it becomes visible
    shoot(page, "squad2-03-roles")
    assert "model=default-squad2" in page.url and "steps=4" in page.url
    page.get_by_role("link", name="Model").click()
    settle(page)
    # the facts grid draws on a canvas; its cells stay in the page, hidden, for assistive technology
    page.get_by_text("allowed by default: abstains when null score").first.wait_for(state="attached")
    shoot(page, "squad2-04-model")
