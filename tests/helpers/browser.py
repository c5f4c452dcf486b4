"""The dashboard in a real browser: `streamlit run app.py` served on a loopback port, the system Chromium, and
waits for a rerun to settle. Screenshots land in $RCQA_SCREENSHOTS (default tests/artifacts, git-ignored)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.servers import free_port, wait_until_healthy

try:
    from playwright import sync_api
except ImportError:  # the browser tests' conftest skips them, saying why
    sync_api = None

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("RCQA_SCREENSHOTS") or ROOT / "tests" / "artifacts")
# a rerun is over when the script has stopped and nothing on the page is stale any more
_SETTLED = """() => {
    const app = document.querySelector('[data-testid=stApp]');
    return app && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-stale=true]');
}"""


def serve(folder: Path, **env_changes: str):
    """`streamlit run app.py` on a free loopback port, with env_changes; yields its URL, and stops it after."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "RCQA_MODEL"}
    env.update({"RCQA_RESULT_CACHE": str(folder / "results"), "HF_HUB_OFFLINE": "1", **env_changes})
    log = folder / "streamlit.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def settle(page, after_action: bool = True) -> None:
    """Wait for the rerun an action caused to start (if it has not already finished) and to end."""
    if after_action:
        try:
            page.wait_for_selector("[data-testid=stApp][data-test-script-state=running]", timeout=2000)
        except sync_api.TimeoutError:
            pass  # it was quicker than the poll
    page.wait_for_function(_SETTLED, timeout=90_000)


def shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def paste(page, passage: str, question: str) -> None:
    """On Explore: paste a passage, then ask a question about it."""
    page.get_by_text("Paste a passage").click()
    settle(page)
    box = page.get_by_label("Passage", exact=True)
    box.fill(passage)
    box.press("Control+Enter")
    settle(page)
    asked = page.get_by_label("Question", exact=True)
    asked.fill(question)
    asked.press("Enter")
    settle(page)


# every drawn chart's titles as single lines (Plotly draws a title's <br> as separate lines, whose text the DOM
# joins without a space, so a phrase across a break is not found by its text)
_CHART_TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(el => {
    const l = el.layout || {};
    return [l.title && l.title.text, l.title && l.title.subtitle && l.title.subtitle.text,
            ...Object.keys(l).filter(k => /^[xy]axis\\d*$/.test(k)).map(k => l[k].title && l[k].title.text)];
}).filter(Boolean).map(t => t.replace(/<br>/g, ' '))"""


def chart_text_count(page, phrase: str) -> int:
    """How many drawn charts' titles (the chart's, its subtitle, its axes') hold `phrase`."""
    return sum(phrase in text for text in page.evaluate(_CHART_TEXTS))


def wait_for_chart_text(page, phrase: str, timeout: int = 30_000) -> None:
    page.wait_for_function(f"() => ({_CHART_TEXTS})().some(t => t.includes({phrase!r}))", timeout=timeout)


def wait_for_chart(page, title: str) -> None:
    page.locator("[data-testid=stPlotlyChart] .main-svg").first.wait_for(timeout=60_000)
    page.get_by_text(title).first.wait_for(timeout=30_000)


def explain_every_layer(page, shot: str) -> None:
    """Click "Explain every layer" (where the explanation was not shipped with the gallery: rcqa.attribution.shipped),
    wait for the heatmap (minutes on a busy CPU) and take a screenshot."""
    button = page.get_by_role("button", name="Explain every layer")
    # whichever the page draws first: the button, or (shipped) the heatmap itself; a settled page may still be
    # drawing its layers' column after the answer's
    button.or_(page.get_by_text("Where each layer's attribution goes")).first.wait_for(timeout=300_000)
    if button.count():
        button.click()
    page.get_by_text("Where each layer's attribution goes").first.wait_for(timeout=600_000)
    settle(page)
    wait_for_chart(page, "Where each layer's attribution goes")
    shoot(page, shot)
