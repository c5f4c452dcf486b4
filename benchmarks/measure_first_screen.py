"""How soon a visitor sees a page, and the layers' picture (a script, not a test; docs/serving.md, "The first
screen"):

    python -m benchmarks.measure_first_screen [--runs 3]

Each run starts a new server (`streamlit run app.py`, the embedded default model) and opens it at 1440×900 in the
system Chromium: cold, the seconds from the request to the first line painted in the page's main area and to the
heatmap of the first gallery example drawn; then, warm (the same server, a new tab), to the heatmap again; and the
Dataset page's first paint and its run's charts. Prints one JSON line per run, the median of each figure, and the
load average before and after (other work on the cores slows every figure: measure on quiet cores)."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, serve

VIEWPORT = {"width": 1440, "height": 900}
PAINTED = "() => !!document.querySelector('[data-testid=stMainBlockContainer] [data-testid=stElementContainer]')"
HEATMAP = "() => !!document.querySelector('[data-testid=stPlotlyChart] .nsewdrag')"


def seconds_to(page, url: str, *conditions: str) -> list[float]:
    """Seconds from asking for `url` until each JavaScript condition first holds, in order."""
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    found = []
    for condition in conditions:
        page.wait_for_function(condition, timeout=300_000, polling=50)
        found.append(round(time.perf_counter() - started, 2))
    return found


def one_run(browser) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        server = serve(Path(folder))
        url = next(server)
        try:
            cold = browser.new_context(viewport=VIEWPORT).new_page()
            painted, heatmap = seconds_to(cold, url, PAINTED, HEATMAP)
            warm = browser.new_context(viewport=VIEWPORT).new_page()
            (warm_heatmap,) = seconds_to(warm, url, HEATMAP)
            dataset = browser.new_context(viewport=VIEWPORT).new_page()
            dataset_painted, dataset_chart = seconds_to(dataset, f"{url}/dataset", PAINTED, HEATMAP.replace(
                " .nsewdrag", ""))
        finally:
            next(server, None)
    return {"cold_first_paint_s": painted, "cold_heatmap_s": heatmap, "warm_heatmap_s": warm_heatmap,
            "dataset_first_paint_s": dataset_painted, "dataset_chart_s": dataset_chart}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()
    runs = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(args.runs):
            runs.append(one_run(browser))
            print(json.dumps(runs[-1]), flush=True)
        browser.close()
    medians = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
    print(json.dumps({"median": medians, "runs": len(runs), "load_before": [round(x, 2) for x in load_before],
                      "load_after": [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main()
