"""End to end in a real browser: `streamlit run app.py` on the embedded default model, driven by Playwright on
the system Chromium. A gallery example is explained down to its heatmap, and a pasted passage holding a script stays text.
Screenshots land in $RCQA_SCREENSHOTS (default tests/artifacts, git-ignored) for a person to look at."""
from __future__ import annotations

import html
import re
from pathlib import Path

from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from tests.helpers.browser import paste, settle, shoot, wait_for_chart

HOSTILE = "The tower <script>window.__pwned=1</script> was built by <b>Margaret Ellison</b> in 1872."


def test_a_gallery_example_runs_to_its_heatmap_and_the_other_pages(server, page):
    page.goto(f"{server}/?ex=orchard-how-many")
    settle(page, after_action=False)
    page.get_by_text("The model's answer", exact=True).wait_for()
    wait_for_chart(page, "Where each layer's attribution goes")  # shipped with the gallery: no click
    assert page.get_by_role("button", name="Explain every layer").count() == 0
    shoot(page, "01-explore-answer")
    assert "ex=orchard-how-many" in page.url and f"steps={ExplainSettings().steps}" in page.url
    shoot(page, "02-explore-heatmap")
    for extension, start in (("csv", b"layer,layer_label,position,word"), ("svg", b"<svg")):
        # the heatmap's own buttons (a whole-passage overview may come first), by their widget keys
        if extension == "svg":  # an image is drawn on a click, through the queue, then offered to download
            page.locator(".st-key-image-heatmap-orchard-how-many-svg button").first.click()
        with page.expect_download(timeout=90_000) as download:
            page.locator(f".st-key-download-heatmap-orchard-how-many-{extension} button").first.click(timeout=120_000)
        assert download.value.suggested_filename == f"heatmap-orchard-how-many.{extension}"
        data = Path(download.value.path()).read_bytes()
        assert data.lstrip().startswith(start)
        if extension == "svg":  # issue 61, finding 10: every word of the passage, not the page's frozen slider
            drawn = html.unescape(re.sub(r"<[^>]+>", " ", data.decode())).lower()
            passage = gallery_example("orchard-how-many").passage
            assert [word for word in re.findall(r"[a-z0-9]+", passage.lower()) if word not in drawn] == []
            assert "slider" not in drawn
    settle(page)  # the image's rerun leaves the page's old elements until it ends
    for tab, shot in (("Top-5 words", "03-explore-top-k"), ("Layer roles", "04-explore-roles"),
                      ("One word across layers", "05-explore-word"), ("Completeness", "06-explore-completeness")):
        page.get_by_role("tab", name=tab).click()
        settle(page)  # a tab is built when opened: the click reruns the page
        page.wait_for_timeout(1500)  # Plotly draws a tab's chart when it becomes visible
        shoot(page, shot)
    page.get_by_role("link", name="Compare layers").click()
    settle(page)
    wait_for_chart(page, "How differently layers spread their attribution")
    page.get_by_role("button", name="Map the token vectors").click()
    page.get_by_text("Token vectors at block 5").wait_for(timeout=60_000)
    shoot(page, "07-compare-layers")
    page.get_by_role("link", name="Model").click()
    settle(page)
    page.get_by_text("The model in use", exact=True).wait_for()
    shoot(page, "08-model")


def test_a_pasted_script_is_shown_as_text_and_never_runs(server, page):
    page.goto(server)
    settle(page, after_action=False)
    paste(page, HOSTILE, "Who built the tower?")
    shown = page.locator("[data-testid=stMarkdown]").filter(has_text="window.__pwned").first
    shown.wait_for()
    assert HOSTILE in shown.inner_text().replace("\n", "")
    assert page.evaluate("() => window.__pwned") is None
    page.get_by_role("button", name="Explain every layer").click()
    settle(page)
    wait_for_chart(page, "Where each layer's attribution goes")
    page.get_by_role("tab", name="Top-5 words").click()
    page.get_by_text("top-5 passage words").first.wait_for()
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("script", has_text="__pwned").count() == 0
    shoot(page, "09-pasted-script-as-text")
