"""Measure one `streamlit run app.py` under load (a script, not a test; needs Playwright and /usr/bin/chromium):

    python -m benchmarks.measure_sessions [--sessions 8] [--visitors 1] [--visitor-delay 20]
        [--visitor-example marathon-who] [--visitor-after-heatmaps K] [--runs 3] [--profile FILE]
        [--load-nice N] [--visitor-core C]

N browser sessions open N different gallery examples and press "Explain every layer" together, with an
empty result cache; `--visitor-delay` seconds later (issue 46: 20 s; and not before K sessions show their heatmap,
given `--visitor-after-heatmaps`: on busy cores the explanations land later) new visitors open the gallery example
one after another. Reported per run (one JSON line) and as medians over `--runs` runs, each on a new server: seconds
from the first press until each session shows its heatmap; each visitor's page times, until the answer is drawn
and until its n-best table is; the browser's parts of the first: until the visitor's browser has loaded the app and
opened its websocket, and from there until the server's message with the answer arrives; and the server's own time
for the same page, from its rerun request to the answer's message, as the server logs it (rcqa.ui.page_timing,
$RCQA_PAGE_TIMING_LOG). `--profile FILE` writes py-spy's collapsed stacks of the server from the press until every
heatmap is in. The N sessions' browser stands in for browsers on the visitors' own machines, which a 2-core
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
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import sync_playwright

from rcqa.figures.answer import ANSWER_MARK
from rcqa.gallery import GALLERY
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, ROOT
from tests.helpers.servers import free_port, wait_until_healthy

HEATMAP = "Where each layer's attribution goes"
ANSWER_TEXT = ANSWER_MARK
VISITOR_DELAY_S, VISITOR_EXAMPLE = 20.0, "marathon-who"  # issue 46's new visitor, not among the first 8 examples


def start_server(folder: Path, cores: str | None = None, **env_changes: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "RCQA_RESULT_CACHE": str(folder / "results"), "HF_HUB_OFFLINE": "1", **env_changes}
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


def measure(url: str, sessions: int, load_browser: Path, visitor_browser: Path = CHROMIUM, visitors: int = 1,
            delay: float = VISITOR_DELAY_S, visitor_example: str = VISITOR_EXAMPLE, timing_log: Path | None = None,
            profile: Callable[[], Callable[[], None]] | None = None, after_heatmaps: int = 0) -> dict:
    """One run: the N sessions press together; `delay` seconds later (and once `after_heatmaps` of them show their
    heatmap) `visitors` new visitors open `visitor_example` one after another. `timing_log`: the server's RCQA_PAGE_TIMING_LOG, whose next line after each visitor's arrival is its
    page's (every earlier session has had its first answer by then). `profile`, given, starts the server's profile
    at the press and returns what ends it, called once every heatmap is in."""
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
        stop_profile = profile() if profile else None
        pressed = time.monotonic()
        for page in pages.values():
            page.get_by_role("button", name="Explain every layer").click()
        time.sleep(max(0.0, pressed + delay - time.monotonic()))
        while after_heatmaps and sum(_heatmap(page).count() > 0 for page in pages.values()) < after_heatmaps:
            time.sleep(0.5)
        found: dict[str, list] = {name: [] for name in (
            "visitor_answer_seconds", "visitor_nbest_table_seconds", "visitor_connected_seconds",
            "visitor_socket_to_answer_seconds", "server_rerun_to_answer_seconds", "visitor_arrived_after_press")}
        for _ in range(visitors):
            visitor = own.new_context().new_page()
            server = ServerTimes(visitor)
            logged = _lines(timing_log)
            arrived = time.monotonic()
            visitor.goto(f"{url}/?src=gallery&ex={visitor_example}")
            answered = answer_shown(visitor)
            found["visitor_arrived_after_press"].append(round(arrived - pressed, 1))
            found["visitor_answer_seconds"].append(round(answered - arrived, 2))
            found["visitor_nbest_table_seconds"].append(round(time.monotonic() - arrived, 2))
            found["visitor_connected_seconds"].append(round(server.opened - arrived, 2))
            found["visitor_socket_to_answer_seconds"].append(round(server.answered - server.opened, 2))
            found["server_rerun_to_answer_seconds"].append(_server_seconds(timing_log, logged))
            visitor.context.close()
        heatmaps = {}
        for example, page in pages.items():
            _heatmap(page).first.wait_for(timeout=600_000)
            heatmaps[example] = round(time.monotonic() - pressed, 1)
        if stop_profile:
            stop_profile()
        browser.close()
        own.close()
    return {"sessions": sessions, "visitor_example": visitor_example, "seconds_to_heatmap": heatmaps,
            "last_heatmap_seconds": max(heatmaps.values(), default=None), **found,
            "cpu_count": os.cpu_count(), "load_average_at_end": os.getloadavg(),
            "workers": os.environ.get("RCQA_EXPLAIN_WORKERS", "default")}


def _heatmap(page):
    return page.locator("[data-testid=stPlotlyChart]").filter(has_text=HEATMAP)


def _lines(log: Path | None) -> int:
    return len(log.read_text().splitlines()) if log and log.exists() else 0


def _server_seconds(log: Path | None, before: int) -> float | None:
    """The server's own time (rcqa.ui.page_timing) for the first page logged after `before` lines, waiting a
    moment for its line: the answer's message may reach the browser before the line is written."""
    deadline = time.monotonic() + 10
    while log is not None and time.monotonic() < deadline:
        if _lines(log) > before:
            return json.loads(log.read_text().splitlines()[before])["rerun_to_answer_s"]
        time.sleep(0.1)
    return None


def py_spy(pid: int, output: Path) -> Callable[[], Callable[[], None]]:
    """What starts py-spy sampling the server (its every thread, 20 times a second, without pausing it) and
    returns what stops it, which writes its stacks, collapsed (one line per stack and its count), to `output`."""
    def start() -> Callable[[], None]:
        spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--nonblocking", "--format", "raw",
                                "--rate", "20", "--output", str(output)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def stop() -> None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
        return stop
    return start


def medians(runs: list[dict]) -> dict:
    """The median over runs of each measure's per-run median (the first visitor's, for one visitor a run)."""
    measures = [name for name, value in runs[0].items() if isinstance(value, list) and name != "load_average_at_end"]
    measures.append("last_heatmap_seconds")
    found = {}
    for name in measures:
        values = [run[name] if name == "last_heatmap_seconds" else statistics.median(
            [value for value in run[name] if value is not None] or [math.nan]) for run in runs]
        found[name] = round(statistics.median(values), 2)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--visitors", type=int, default=1, help="new visitors, one after another")
    parser.add_argument("--visitor-delay", type=float, default=VISITOR_DELAY_S,
                        help="seconds after the press when the first new visitor arrives")
    parser.add_argument("--visitor-example", default=VISITOR_EXAMPLE, help="the gallery example they open")
    parser.add_argument("--visitor-after-heatmaps", type=int, default=0,
                        help="and not before this many sessions show their heatmap (on busy cores the explanations "
                             "land later than the delay)")
    parser.add_argument("--runs", type=int, default=1, help="runs, each on a new server; medians reported")
    parser.add_argument("--profile", type=Path,
                        help="py-spy's collapsed stacks of the server, from the press until every heatmap is in "
                             "(the last run's; needs py-spy)")
    parser.add_argument("--load-nice", type=int, help="run the N sessions' browser at this niceness, not SCHED_IDLE")
    parser.add_argument("--visitor-core", type=int,
                        help="give the visitors' browser this core alone (taskset), as if on a machine of its own; "
                             "the server and the N sessions' browser get the other cores")
    arguments = parser.parse_args()
    others = None
    if arguments.visitor_core is not None:
        others = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)) if c != arguments.visitor_core)
    runs = []
    for _ in range(arguments.runs):
        with tempfile.TemporaryDirectory() as folder:
            timing_log = Path(folder) / "page_timing.jsonl"
            process, url = start_server(Path(folder), others, RCQA_PAGE_TIMING_LOG=str(timing_log))
            load_browser = background_chromium(Path(folder), arguments.load_nice, others)
            visitor_browser = CHROMIUM if others is None else chromium_wrapper(
                Path(folder) / "chromium-visitor", f"{pinned(str(arguments.visitor_core))}{CHROMIUM}")
            profile = py_spy(process.pid, arguments.profile) if arguments.profile else None
            try:
                load = os.getloadavg()
                found = measure(url, arguments.sessions, load_browser, visitor_browser, arguments.visitors,
                                arguments.visitor_delay, arguments.visitor_example, timing_log, profile,
                                arguments.visitor_after_heatmaps)
                found["load_average_at_start"] = load
                found["load_browser"] = ("SCHED_IDLE" if arguments.load_nice is None
                                         else f"niceness {arguments.load_nice}")
                found["visitor_core"] = arguments.visitor_core
                runs.append(found)
                print(json.dumps(found), flush=True)
            finally:
                process.terminate()
                process.wait(timeout=30)
    print(json.dumps({"runs": len(runs), "medians": medians(runs)}, indent=1))


if __name__ == "__main__":
    main()
