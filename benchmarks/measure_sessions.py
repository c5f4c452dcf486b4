"""Measure one `streamlit run app.py` under load (a script, not a test; needs Playwright and /usr/bin/chromium):

    python -m benchmarks.measure_sessions [--sessions 8] [--load-nice N] [--visitor-core C]

N browser sessions open N different gallery examples and press "Explain every layer" together, with an
empty result cache. Reported: seconds from the first press until each session shows its heatmap, and the
page times of more visitors who arrive one after another once every request is in: until the gallery answer is
drawn, and until its n-best table is; and the two parts of the first: until the visitor's browser has loaded the
app and opened its websocket (browser work), and from there until the server's message with the answer arrives
(the server's share). The N sessions' browser stands in for browsers on the visitors' own machines, which a 2-core
server would otherwise share with 9 Chromiums: it runs as SCHED_IDLE (`--load-nice N` runs it at niceness N
instead, as this script did before; Chromium sets its own processes' niceness, its browser process to -8 and its
renderers to 0 or 5 whatever it was started with, so niceness hardly keeps it back, while SCHED_IDLE, which
niceness does not change, does). The visitors' browser runs at normal priority, and both the server and the
visitors' browser are as they would be. With `--visitor-core C` the visitors' browser has core C to itself, as on
a machine of its own, and the server and the N sessions' browser share the other cores."""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from rcqa.gallery import GALLERY
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, ROOT
from tests.helpers.servers import free_port, wait_until_healthy

HEATMAP = "Where each layer's attribution goes"
ANSWER_TEXT = "among every valid span of the passage"


def start_server(folder: Path, cores: str | None = None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "RCQA_RESULT_CACHE": str(folder / "results"), "HF_HUB_OFFLINE": "1"}
    env.pop("RCQA_MODEL", None)
    log = (folder / "streamlit.log").open("w")
    pinned = ["taskset", "-c", cores] if cores else []
    process = subprocess.Popen(
        [*pinned, sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.address",
         "127.0.0.1", "--server.headless", "true", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(url, process, folder / "streamlit.log")
    return process, url


def answer_shown(page) -> float:
    """Wait until the answer and then its n-best table are drawn; returns when the answer was (monotonic time)."""
    page.get_by_text(ANSWER_TEXT).first.wait_for(timeout=300_000)
    answered = time.monotonic()
    page.locator("th", has_text="end logit").first.wait_for(timeout=300_000)  # "start / end logit"
    return answered


class ServerTimes:
    """When the page's browser had loaded the app far enough to open its websocket to the server, and when the
    server's message carrying the answer arrived on it: the server's own share of a visitor's page time."""

    def __init__(self, page):
        self.opened = self.answered = float("nan")
        page.on("websocket", self._opened)

    def _opened(self, socket) -> None:
        self.opened = time.monotonic()
        socket.on("framereceived", self._received)

    def _received(self, payload) -> None:
        data = payload if isinstance(payload, bytes) else payload.encode()
        if ANSWER_TEXT.encode() in data and math.isnan(self.answered):  # the first such frame
            self.answered = time.monotonic()


def background_chromium(folder: Path, niceness: int | None, cores: str | None = None) -> Path:
    """Chromium as SCHED_IDLE, or at `niceness`, on `cores` (all by default)."""
    command = "chrt --idle 0" if niceness is None else f"nice -n {niceness}"
    return chromium_wrapper(folder / "chromium-background", f"{pinned(cores)}{command} {CHROMIUM}")


def chromium_wrapper(path: Path, command: str) -> Path:
    path.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
    path.chmod(0o755)
    return path


def pinned(cores: str | None) -> str:
    return f"taskset -c {cores} " if cores else ""


def measure(url: str, sessions: int, load_browser: Path, visitor_browser: Path = CHROMIUM, visitors: int = 3) -> dict:
    examples = [e.id for e in GALLERY[:sessions]]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(load_browser), args=CHROMIUM_ARGS)
        own = playwright.chromium.launch(executable_path=str(visitor_browser), args=CHROMIUM_ARGS)
        warm = browser.new_page()  # loads the model once, as the first visitor of a running server would
        warm.goto(url)
        answer_shown(warm)
        pages = {example: browser.new_context().new_page() for example in examples}
        for example, page in pages.items():
            page.goto(f"{url}/?ex={example}")
        for page in pages.values():
            answer_shown(page)
        pressed = time.monotonic()
        for page in pages.values():
            page.get_by_role("button", name="Explain every layer").click()
        visitor_seconds, visitor_table_seconds, server_seconds, connected_seconds = [], [], [], []
        for example in GALLERY[-visitors:]:
            visitor = own.new_context().new_page()
            server = ServerTimes(visitor)
            arrived = time.monotonic()
            visitor.goto(f"{url}/?ex={example.id}")
            answered = answer_shown(visitor)
            visitor_seconds.append(round(answered - arrived, 2))
            visitor_table_seconds.append(round(time.monotonic() - arrived, 2))
            connected_seconds.append(round(server.opened - arrived, 2))
            server_seconds.append(round(server.answered - server.opened, 2))
            visitor.context.close()
        heatmaps = {}
        for example, page in pages.items():
            page.locator("[data-testid=stPlotlyChart]").filter(has_text=HEATMAP).first.wait_for(timeout=600_000)
            heatmaps[example] = round(time.monotonic() - pressed, 1)
        browser.close()
        own.close()
    return {"sessions": sessions, "seconds_to_heatmap": heatmaps,
            "last_heatmap_seconds": max(heatmaps.values(), default=None),
            "visitor_answer_seconds": visitor_seconds, "visitor_nbest_table_seconds": visitor_table_seconds,
            "visitor_connected_seconds": connected_seconds, "visitor_server_answer_seconds": server_seconds,
            "cpu_count": os.cpu_count(),
            "workers": os.environ.get("RCQA_EXPLAIN_WORKERS", "default")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--load-nice", type=int, help="run the N sessions' browser at this niceness, not SCHED_IDLE")
    parser.add_argument("--visitor-core", type=int,
                        help="give the visitors' browser this core alone (taskset), as if on a machine of its own; "
                             "the server and the N sessions' browser get the other cores")
    arguments = parser.parse_args()
    others = None
    if arguments.visitor_core is not None:
        others = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)) if c != arguments.visitor_core)
    with tempfile.TemporaryDirectory() as folder:
        process, url = start_server(Path(folder), others)
        load_browser = background_chromium(Path(folder), arguments.load_nice, others)
        visitor_browser = CHROMIUM if others is None else chromium_wrapper(
            Path(folder) / "chromium-visitor", f"{pinned(str(arguments.visitor_core))}{CHROMIUM}")
        try:
            found = measure(url, arguments.sessions, load_browser, visitor_browser)
            found["load_browser"] = "SCHED_IDLE" if arguments.load_nice is None else f"niceness {arguments.load_nice}"
            found["visitor_core"] = arguments.visitor_core
            print(json.dumps(found, indent=1))
        finally:
            process.terminate()


if __name__ == "__main__":
    main()
