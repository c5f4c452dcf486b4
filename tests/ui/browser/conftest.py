"""The browser tier: every module here drives the dashboard in the system Chromium through Playwright. Each test
is marked `browser` (deselect them with -m "not browser") and skipped, saying why, where Chromium or Playwright is
missing (.ci/run installs both)."""
from pathlib import Path

import pytest

from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, serve, sync_api

HERE = Path(__file__).parent


def _missing() -> str | None:
    if sync_api is None:
        return "playwright is not installed (.ci/run installs it)"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed (.ci/run installs it)"
    return None


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(config, items):
    missing = _missing()
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)
            if missing:
                item.add_marker(pytest.mark.skip(reason=missing))


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One server for every module that needs nothing of its own (no setting, no cold start, no empty cache): its
    start and the model's load are paid once, and a result one module explained the next finds in the cache (so a
    test that must see an explanation run picks settings no other module explains with)."""
    yield from serve(tmp_path_factory.mktemp("server"))


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory):
    """A server started for this module alone: for what a cold start or a first reading shows."""
    yield from serve(tmp_path_factory.mktemp("fresh-server"))


@pytest.fixture(scope="session")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    # tall, so that a full-page screenshot holds the whole app (Streamlit scrolls inside its own container)
    context = browser.new_context(viewport={"width": 1400, "height": 2600})
    yield context.new_page()
    context.close()
