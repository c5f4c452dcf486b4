"""Soak one `streamlit run app.py` (a script, not a test, not in CI; needs Playwright and /usr/bin/chromium):

    python -m benchmarks.measure_soak [--minutes 20] [--warmup-minutes 2.5]

Visitors arrive one after another for the whole time, each opening the next gallery example in a fresh browser
context and leaving once its answer is drawn. Every 30 s the server's resident memory and open file descriptors
(its own and its worker processes') are sampled.

The baseline is the sample at the end of the warm-up, which visits every gallery example at least once (every
cache a visit fills is filled) and outlasts Streamlit's `server.disconnectedSessionTTL` (120 s: a closed tab's
session is kept that long for a reconnect, so the number of kept sessions has reached its steady state). Reported
as JSON: the samples (seconds since the start, RSS in MB, descriptors), RSS growth from the baseline to the last
sample, in percent (want within 10 %), the change in descriptors (want 0, or no trend: each kept session holds
its event loop's three, so their number follows the rate of visits) and their range after the baseline. A short run (`--minutes 1
--warmup-minutes 0.5`) checks that the script works; only a long one measures."""
from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from playwright.sync_api import sync_playwright

from rcqa.gallery import GALLERY
from benchmarks.measure_sessions import answer_shown, start_server
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS

SAMPLE_SECONDS = 30
SESSION_TTL_SECONDS = 120  # Streamlit's server.disconnectedSessionTTL, which .streamlit/config.toml leaves as is


def footprint(pid: int) -> tuple[float, int]:
    """(RSS in MB, open file descriptors) of the server and its children (one that ends meanwhile is left out)."""
    server = psutil.Process(pid)
    rss = fds = 0
    for process in [server, *server.children(recursive=True)]:
        try:
            rss, fds = rss + process.memory_info().rss, fds + process.num_fds()
        except psutil.NoSuchProcess:
            pass
    return round(rss / 2**20, 1), fds


def soak(url: str, pid: int, minutes: float, warmup_minutes: float) -> dict:
    samples, visits, started = [], 0, time.monotonic()
    warmed, next_sample, baseline, end = started + 60 * warmup_minutes, started, None, None

    def sample() -> tuple[float, float, int]:
        return (round(time.monotonic() - started), *footprint(pid))

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for example in itertools.cycle(GALLERY):
            now = time.monotonic()
            if now >= next_sample:
                samples.append(sample())
                next_sample += SAMPLE_SECONDS
            if baseline is None and now >= warmed and visits >= len(GALLERY):
                baseline, end = sample(), now + 60 * minutes
                samples.append(baseline)
            if end is not None and now >= end:
                break
            page = browser.new_context().new_page()
            page.goto(f"{url}/?ex={example.id}")
            answer_shown(page)
            page.context.close()
            visits += 1
        browser.close()
    time.sleep(5)  # closed sessions' sockets drain
    samples.append(sample())
    soaked = samples[samples.index(baseline):]
    return {"minutes": minutes, "warmup_minutes": warmup_minutes, "visits": visits,
            "samples_seconds_rss_mb_fds": samples, "baseline": baseline,
            "rss_growth_percent": round(100 * (samples[-1][1] - baseline[1]) / baseline[1], 1),
            "fd_change": samples[-1][2] - baseline[2], "fd_range": [min(s[2] for s in soaked), max(s[2] for s in soaked)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20, help="the soak after the warm-up")
    parser.add_argument("--warmup-minutes", type=float, default=(SESSION_TTL_SECONDS + SAMPLE_SECONDS) / 60,
                        help="at least one visit to every gallery example, whatever this says")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        process, url = start_server(Path(name))
        try:
            print(json.dumps(soak(url, process.pid, arguments.minutes, arguments.warmup_minutes), indent=1))
        except Exception:
            print((Path(name) / "streamlit.log").read_text()[-4000:], file=sys.stderr)  # why the server failed
            raise
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)  # its workers end with it, before their folder is removed
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()
