"""Soak one `streamlit run app.py` (a script, not a test, not in CI; needs Playwright and /usr/bin/chromium):

    python -m tests.measure_soak [--minutes 20]

Visitors arrive one after another for the whole time, each opening the next gallery example in a fresh browser
context and leaving once its answer is drawn. Every 30 s the server's resident memory and open file descriptors
(its own and its worker processes') are sampled. Reported as JSON: the samples, and RSS growth from the sample
after warm-up (the second) to the last, in percent (want within 10 %), and the change in descriptors (want 0)."""
from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from pathlib import Path

import psutil
from playwright.sync_api import sync_playwright

from rcqa.gallery import GALLERY
from tests.measure_sessions import answer_shown, start_server
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS

SAMPLE_SECONDS = 30


def footprint(pid: int) -> tuple[float, int]:
    """(RSS in MB, open file descriptors) of the server and its children."""
    processes = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    return (round(sum(p.memory_info().rss for p in processes) / 2**20, 1), sum(p.num_fds() for p in processes))


def soak(url: str, pid: int, minutes: float) -> dict:
    samples, visits, next_sample = [], 0, time.monotonic()
    end = time.monotonic() + 60 * minutes
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for example in itertools.cycle(GALLERY):
            if time.monotonic() >= next_sample:
                samples.append(footprint(pid))
                next_sample += SAMPLE_SECONDS
            if time.monotonic() >= end:
                break
            page = browser.new_context().new_page()
            page.goto(f"{url}/?ex={example.id}")
            answer_shown(page)
            page.context.close()
            visits += 1
        browser.close()
    time.sleep(5)  # closed sessions' sockets drain
    samples.append(footprint(pid))
    settled = samples[1] if len(samples) > 2 else samples[0]
    return {"minutes": minutes, "visits": visits, "samples_rss_mb_fds": samples,
            "rss_growth_percent": round(100 * (samples[-1][0] - settled[0]) / settled[0], 1),
            "fd_change": samples[-1][1] - settled[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        process, url = start_server(Path(name))
        try:
            print(json.dumps(soak(url, process.pid, arguments.minutes), indent=1))
        finally:
            process.terminate()


if __name__ == "__main__":
    main()
