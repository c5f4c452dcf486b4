"""The Dataset page in a browser, on the committed runs of a fresh server: its title is painted while the largest
run is still being read (a progress bar naming it below), it opens on that run and names it in the link, a link
reopens the run chosen, and the quantifier count shown agrees with the chart's legend, or says why not. Its Sentences
tab draws the section its kept summary read from the run's word shares, the y-axis title clear of the subtitle."""
import re
from urllib.parse import parse_qs, urlsplit

# sync_api: None where Playwright is missing, and the test skipped
from tests.helpers.browser import settle, shoot, sync_api, wait_for_chart_text
from tests.ui.app.test_app_dataset_link import COMMITTED, committed_counts

TITLE = "Does it hold over a dataset?"
# the title is on the page, a progress bar says a run is being read, and no number of it is shown yet
_PAINTED_WHILE_READING = """() => {
    const title = [...document.querySelectorAll('h1')].some(h => h.textContent.includes(%r));
    const bar = [...document.querySelectorAll('[data-testid=stProgress]')].some(p => p.textContent.includes('Reading run'));
    return title && bar && !document.querySelector('[data-testid=stMetric]');
}""" % TITLE
SENTENCES = "Which sentence does each layer rest on?"
# the boxes of the chart's subtitle and y-axis title (a 58-character one ran up into the subtitle at the page's height)
SUBTITLE_AND_Y_TITLE = """title => {
    const chart = [...document.querySelectorAll('[data-testid=stPlotlyChart]')].find(c => c.innerText.includes(title));
    return ['.gtitle-subtitle', '.ytitle'].map(s => chart.querySelector(s).getBoundingClientRect())
        .map(box => [box.left, box.top, box.right, box.bottom]);
}"""


def linked_run(url: str) -> str:
    return parse_qs(urlsplit(url).query)["ds"][0]


def test_the_title_comes_first_the_largest_run_opens_its_link_reopens_and_counts_agree(fresh_server, page):
    counts = {run.name: committed_counts(run) for run in sorted(COMMITTED.iterdir()) if (run / "shards").is_dir()}
    largest = max(counts, key=lambda name: counts[name][0])  # the first of those that tie, as the page lists them
    _, asked, drawn = counts[largest]

    page.goto(f"{fresh_server}/dataset")
    page.wait_for_function(_PAINTED_WHILE_READING, timeout=120_000)  # a fresh server reads the run for seconds
    settle(page, after_action=False)
    assert page.get_by_label("Run", exact=True).input_value().startswith(f"{largest} ")
    assert linked_run(page.url) == largest
    quantifiers = page.locator("[data-testid=stMetric]").filter(has_text="Quantifier questions")
    assert quantifiers.locator("[data-testid=stMetricValue]").inner_text() == f"{asked:,}"
    page.get_by_role("tab", name="Quantifier questions").click()
    page.get_by_text(f"{drawn:,} with two or more numbers in the passage are drawn").first.wait_for()
    legend = page.locator(".legendtext").filter(has_text=f"({drawn} of {asked} questions)")
    # one legend entry, this run's (the other charts' legends name the run too, in their hidden tabs); expect retries,
    # for Plotly redraws the legend when its tab is shown and the nodes read a moment before may be gone
    sync_api.expect(legend).to_have_count(1, timeout=30_000)
    sync_api.expect(legend).to_have_text(re.compile("^" + re.escape(f"{largest} ")))
    shoot(page, "dataset-first-paint")

    page.get_by_role("tab", name="Sentences").click()
    wait_for_chart_text(page, SENTENCES)
    page.get_by_text(re.compile(r"are read by sentence, all from their word shares summed by sentence")).wait_for()
    subtitle, y_title = page.evaluate(SUBTITLE_AND_Y_TITLE, SENTENCES)
    assert y_title[1] >= subtitle[3] or y_title[2] <= subtitle[0], (subtitle, y_title)

    other = next(name for name in counts if name != largest and counts[name][0] < counts[largest][0])
    page.get_by_label("Run", exact=True).click()
    page.get_by_role("option").filter(has_text=f"{other} ").first.click()
    settle(page)
    assert linked_run(page.url) == other
    reopened = page.context.new_page()
    reopened.goto(page.url)
    reopened.get_by_label("Run", exact=True).wait_for(timeout=120_000)
    settle(reopened, after_action=False)
    assert reopened.get_by_label("Run", exact=True).input_value().startswith(f"{other} ")
