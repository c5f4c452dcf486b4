"""Load and fault test of one `streamlit run app.py` (a script, not a test; needs Playwright and /usr/bin/chromium):

    python -m tests.measure_abuse [--sessions 8] [--check 2]

While N browser sessions explain N gallery examples (as in tests.measure_sessions), one abusive client, in bounded
loops: opens 40 websocket connections and holds them; pastes a 100,000-comma passage; uploads a file nested 1,000
deep and a 40 MB SQuAD file; opens ?model=/etc. Meanwhile new visitors open gallery examples one after another.
Reported as JSON: the visitors' seconds until their gallery answer is drawn (median, want under 3 s), what each
abusive step showed (the first line of every alert, and whether any page showed an exception), the server's peak RSS with
its worker processes (sampled every 0.5 s), and whether the first `--check` sessions' explanations, as the server
cached them, equal the same explanation computed alone in this process."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil
from playwright.sync_api import sync_playwright
from websockets.sync.client import connect

from rcqa.gallery import GALLERY
from tests.measure_sessions import HEATMAP, answer_shown, background_chromium, start_server
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS

COMMAS = "a," * 50_000 + " The bridge cost a lot."
ABUSIVE_CONNECTIONS = 40


class PeakRss:
    """The largest resident memory of the server and its children, sampled in a thread."""

    def __init__(self, pid: int):
        self.process, self.peak_mb, self._stop = psutil.Process(pid), 0.0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.5):
            try:
                processes = [self.process, *self.process.children(recursive=True)]
                total = sum(p.memory_info().rss for p in processes if p.is_running())
            except psutil.Error:
                continue
            self.peak_mb = max(self.peak_mb, total / 2**20)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return round(self.peak_mb, 1)


def shown(page) -> dict:
    """What a page shows after an abusive step: the first alert's first line, and any exception box."""
    time.sleep(1.0)
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                           " === 'notRunning'", timeout=300_000)
    alerts = page.locator("[data-testid=stAlert]").all_inner_texts()
    return {"alerts": [alert.splitlines()[0][:160] for alert in alerts],
            "exception": page.locator("[data-testid=stException]").count() > 0}


def write_files(folder: Path) -> tuple[Path, Path]:
    deep = folder / "deep.json"
    deep.write_text("[" * 1000 + "]" * 1000)
    from rcqa.resources import squad_file

    squad = json.loads(squad_file("train").read_text())
    big = folder / "big-squad.json"
    articles = squad["data"]
    while len(json.dumps({"data": articles})) < 40e6:
        articles = articles + squad["data"][:50]
    big.write_text(json.dumps({"version": "1.1", "data": articles}))
    return deep, big


def abuse(browser, url: str, files: tuple[Path, Path]) -> dict:
    host = url.removeprefix("http://")
    sockets = [connect(f"ws://{host}/_stcore/stream", subprotocols=["streamlit"], open_timeout=30)
               for _ in range(ABUSIVE_CONNECTIONS)]
    steps = {"connections_held": len(sockets)}
    page = browser.new_context().new_page()
    page.goto(f"{url}/?src=paste")
    page.get_by_role("textbox", name="Passage", exact=True).fill(COMMAS)
    question = page.get_by_role("textbox", name="Question", exact=True)
    question.fill("What did the bridge cost?")
    question.press("Enter")
    steps["paste_100000_commas"] = shown(page)
    for name, path in zip(("upload_nested_1000_deep", "upload_40_mb_squad"), files):
        page.goto(f"{url}/?src=upload")
        page.locator("input[type=file]").set_input_files(str(path))
        steps[name] = shown(page)
    page.goto(f"{url}/?model=/etc")
    steps["link_model_etc"] = shown(page)
    page.context.close()
    for socket in sockets:
        socket.close()
    return steps


def equal_alone(folder: Path, example_ids: list[str]) -> dict[str, dict | None]:
    """Each example's explanation as the server cached it, against the same one (same settings) computed alone
    here; None when the server kept none for it."""
    import torch

    from rcqa.attribution.cache import ResultCache
    from rcqa.attribution.engine import explain
    from rcqa.attribution.settings import IGSettings
    from rcqa.gallery import gallery_example
    from rcqa.model import load_model
    from rcqa.types import AGGREGATIONS, COMPACT_AGGREGATIONS, Attribution
    from rcqa.ui.jobs import default_workers, torch_threads

    served = ResultCache(folder / "results", read_only=True)
    kept = {result.example.question: result for result in map(Attribution.from_npz, served.files())}
    # as the server's worker processes compute: with their torch threads, since another thread count sums in
    # another order (on 2 cores: 1 thread in a worker, torch's default 2 here, differed by 5e-7 of the largest score)
    torch.set_num_threads(torch_threads(default_workers()))
    qa_model, verdicts = load_model(), {}
    for example_id in example_ids:
        example = gallery_example(example_id)
        result = kept.get(example.question)
        if result is None:
            verdicts[example_id] = None
            continue
        settings = {k: v for k, v in result.settings.items() if k not in ("max_len", "doc_stride")}  # the model's
        alone = explain(qa_model, example, IGSettings.from_dict(settings))
        # same threads, same order of sums: bitwise equal once rounded to the float32 the cache keeps, in the
        # aggregations it keeps (the others it derives). The difference is measured against the largest score
        # (element by element, 1e-7 beside a score of 11 "differs by 69 %")
        kept_axis = [AGGREGATIONS.index(name) for name in COMPACT_AGGREGATIONS]
        equal = np.array_equal(result.scores[:, kept_axis], alone.scores[:, kept_axis].astype(np.float32))
        largest = np.abs(alone.scores).max()
        verdicts[example_id] = {"equal": bool(equal),
                                "max_difference_of_largest_score": float(np.abs(result.scores - alone.scores).max()
                                                                         / largest),
                                "same_answer": result.answer.best == alone.answer.best}
    return verdicts


def measure(url: str, folder: Path, sessions: int, visitors: int = 3) -> dict:
    files = write_files(folder)
    examples = [e.id for e in GALLERY[:sessions]]
    with sync_playwright() as playwright:
        load = playwright.chromium.launch(executable_path=str(background_chromium(folder, None)), args=CHROMIUM_ARGS)
        own = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        warm = load.new_page()
        warm.goto(url)
        answer_shown(warm)
        pages = {example: load.new_context().new_page() for example in examples}
        for example, page in pages.items():
            page.goto(f"{url}/?ex={example}")
            answer_shown(page)
        for page in pages.values():
            page.get_by_role("button", name="Explain every layer").click()
        abused = {}
        abuser = threading.Thread(target=lambda: abused.update(abuse_in_own_playwright(url, files)), daemon=True)
        abuser.start()
        seconds = []
        for example in GALLERY[-visitors:]:
            visitor = own.new_context().new_page()
            arrived = time.monotonic()
            visitor.goto(f"{url}/?ex={example.id}")
            answer_shown(visitor)
            seconds.append(round(time.monotonic() - arrived, 2))
            visitor.context.close()
        abuser.join(timeout=900)
        exceptions = {}
        for example, page in pages.items():
            page.locator("[data-testid=stPlotlyChart]").filter(has_text=HEATMAP).first.wait_for(timeout=900_000)
            exceptions[example] = page.locator("[data-testid=stException]").count() > 0
        load.close()
        own.close()
    return {"sessions": sessions, "visitor_answer_seconds": seconds,
            "visitor_answer_median_seconds": statistics.median(seconds), "abuse": abused,
            "session_exceptions": exceptions, "cpu_count": os.cpu_count()}


def abuse_in_own_playwright(url: str, files: tuple[Path, Path]) -> dict:
    """Playwright's sync API is bound to its thread: the abusive client drives a browser of its own."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            return abuse(browser, url, files)
        except Exception as error:  # reported, not lost with the thread
            return {"abuse_failed": f"{type(error).__name__}: {str(error).splitlines()[0]}"}
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--check", type=int, default=2, help="sessions whose results are recomputed alone")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        process, url = start_server(folder)
        rss = PeakRss(process.pid)
        try:
            found = measure(url, folder, arguments.sessions)
        finally:
            found_rss = rss.stop()
            process.terminate()
        found["server_peak_rss_mb"] = found_rss
        found["equal_to_alone"] = equal_alone(folder, [e.id for e in GALLERY[:arguments.check]])
        print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
