"""Load and fault test of one `streamlit run app.py` (a script, not a test; needs Playwright and /usr/bin/chromium):

    python -m benchmarks.measure_abuse [--sessions 8] [--check 2]

While N browser sessions explain N gallery examples (as in benchmarks.measure_sessions), one abusive client, in bounded
loops: opens 40 websocket connections and holds them; pastes a 100,000-comma passage; pastes a passage of 128
windows and asks for it whole (win=all), which costs about an hour; pastes the longest passage the server's job
budget allows whole and asks for it, and keeps that tab open until the visitors are done; uploads a file nested
1,000 deep and a 40 MB SQuAD file; opens ?model=/etc. Meanwhile new visitors open gallery examples one after
another and press "Explain every layer" on each: short jobs, which the short lane runs at once, inside the worker
busy with the whole passage where it is the only one (docs/serving.md: The short lane). Reported as JSON: the visitors' seconds until their gallery answer
is drawn (median, want under 3 s) and until their own explanation is drawn, whether those finished while the
abusive whole passage was queued or running, what each abusive step showed (the first line of every alert and
caption, and whether any page showed an exception), the server's peak RSS with its worker processes (sampled every
0.5 s), and whether the first `--check` sessions' explanations, as the server cached them, equal the same
explanation computed alone in this process."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
import traceback
from pathlib import Path

import numpy as np
import psutil
from playwright.sync_api import sync_playwright
from websockets.sync.client import connect

from rcqa.gallery import GALLERY
from benchmarks.measure_sessions import HEATMAP, answer_shown, background_chromium, start_server
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS

COMMAS = "a," * 50_000 + " The bridge cost a lot."
ABUSIVE_CONNECTIONS = 40
QUESTION = "What did the bridge cost?"


def passage_of(words: int) -> str:
    """A pasted passage of made-up words (about 3 word-pieces each), with the answer at its end."""
    return " ".join(f"zq{i:05d}x" for i in range(words)) + " The bridge cost a lot."


def passage_of_windows(windows: int) -> str:
    """The longest passage_of(n) that the default model reads in at most `windows` windows."""
    from rcqa.model import load_model
    from rcqa.qa import InputError, encode

    qa_model, low, high = load_model(), 1, 9_900  # the passage's limit is 10,000 words
    while low < high:
        middle = (low + high + 1) // 2
        try:
            fits = len(encode(qa_model, QUESTION, passage_of(middle)).inputs["input_ids"]) <= windows
        except InputError:  # past the 128 windows a passage may have
            fits = False
        low, high = (middle, high) if fits else (low, middle - 1)
    return passage_of(low)


def windows_within_budget() -> int:
    """The most windows of the default model whose whole passage the server's job budget allows, as the server
    estimates it (rcqa.attribution.cost at its default speed), with a tenth to spare."""
    from rcqa.attribution.cost import explanation_cost
    from rcqa.attribution.settings import IGSettings
    from rcqa.model import load_model
    from rcqa.ui.capacity import job_budget

    qa_model = load_model()
    window = explanation_cost(qa_model, IGSettings(windows="all"), windows=1, tokens=qa_model.max_len).seconds()
    return max(2, int(0.9 * job_budget() / window))


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
    captions = page.locator("[data-testid=stCaptionContainer]").all_inner_texts()
    return {"alerts": [first_line(alert) for alert in alerts],
            "captions": [caption[:200] for caption in captions if "on this server" in caption],
            "explain_offered": page.get_by_role("button", name="Explain every layer").count() > 0,
            "exception": page.locator("[data-testid=stException]").count() > 0}


def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


def paste(page, url: str, passage: str, query: str = "") -> None:
    page.goto(f"{url}/?src=paste{query}")
    page.get_by_role("textbox", name="Passage", exact=True).fill(passage)
    question = page.get_by_role("textbox", name="Question", exact=True)
    question.fill(QUESTION)
    question.press("Enter")


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


def abuse(browser, url: str, files: tuple[Path, Path], passages: dict[str, str], visitors_done: threading.Event,
          times: dict) -> dict:
    host = url.removeprefix("http://")
    sockets = [connect(f"ws://{host}/_stcore/stream", subprotocols=["streamlit"], open_timeout=30)
               for _ in range(ABUSIVE_CONNECTIONS)]
    steps = {"connections_held": len(sockets)}
    page = browser.new_context().new_page()
    paste(page, url, COMMAS)
    steps["paste_100000_commas"] = shown(page)
    paste(page, url, passages["128"], "&win=all")
    steps["whole_passage_128_windows"] = shown(page)
    if steps["whole_passage_128_windows"]["explain_offered"]:  # not refused: it runs, until the time limit
        page.get_by_role("button", name="Explain every layer").click()
    held = browser.new_context().new_page()  # the longest whole passage the budget allows, kept open
    paste(held, url, passages["budget"], "&win=all")
    steps["whole_passage_within_budget"] = shown(held)
    held.get_by_role("button", name="Explain every layer").click()
    times["abusive_job_queued"] = time.monotonic()
    times["queued"].set()
    for name, path in zip(("upload_nested_1000_deep", "upload_40_mb_squad"), files):
        page.goto(f"{url}/?src=upload")
        page.locator("input[type=file]").set_input_files(str(path))
        steps[name] = shown(page)
    page.goto(f"{url}/?model=/etc")
    steps["link_model_etc"] = shown(page)
    page.context.close()
    visitors_done.wait(1800)
    steps["whole_passage_within_budget_when_the_visitors_were_done"] = {  # its page still waits: read it as it is
        "alerts": [first_line(alert) for alert in held.locator("[data-testid=stAlert]").all_inner_texts()],
        "progress": held.locator("[data-testid=stProgress]").all_inner_texts()}
    held.context.close()  # the tab closes: its job is dropped, or stopped if it runs
    times["abusive_tab_closed"] = time.monotonic()
    for socket in sockets:
        socket.close()
    return steps


def equal_alone(folder: Path, example_ids: list[str]) -> dict[str, dict | None]:
    """Each example's explanation as the server cached it, against the same one (same settings) computed alone
    here; None when the server kept none for it."""
    import torch

    from rcqa.attribution.cache import ResultCache
    from rcqa.attribution.explanation import explain
    from rcqa.gallery import gallery_example
    from rcqa.model import load_model
    from rcqa.types import AGGREGATIONS, COMPACT_AGGREGATIONS, Attribution
    from rcqa.ui.capacity import default_workers, torch_threads

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
        alone = explain(qa_model, example, result.settings)
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
    load_at_start = os.getloadavg()
    files = write_files(folder)
    windows = windows_within_budget()
    passages = {"128": passage_of_windows(128), "budget": passage_of_windows(windows)}
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
        abused, times, visitors_done = {}, {"queued": threading.Event()}, threading.Event()
        abuser = threading.Thread(target=lambda: abused.update(abuse_in_own_playwright(
            url, files, passages, visitors_done, times)), daemon=True)
        abuser.start()
        seconds, explained, finished = [], [], []
        for example in GALLERY[-visitors:]:
            visitor = own.new_context().new_page()
            arrived = time.monotonic()
            visitor.goto(f"{url}/?ex={example.id}")
            answer_shown(visitor)
            seconds.append(round(time.monotonic() - arrived, 2))
            times["queued"].wait(600)  # the abusive whole passage is in the queue before the visitor asks
            asked = time.monotonic()
            visitor.get_by_role("button", name="Explain every layer").click()
            visitor.locator("[data-testid=stPlotlyChart]").filter(has_text=HEATMAP).first.wait_for(timeout=900_000)
            finished.append(time.monotonic())
            explained.append(round(finished[-1] - asked, 1))
            visitor.context.close()
        visitors_done.set()
        abuser.join(timeout=900)
        exceptions = {}
        for example, page in pages.items():
            page.locator("[data-testid=stPlotlyChart]").filter(has_text=HEATMAP).first.wait_for(timeout=900_000)
            exceptions[example] = page.locator("[data-testid=stException]").count() > 0
        load.close()
        own.close()
    queued, closed = times.get("abusive_job_queued", float("nan")), times.get("abusive_tab_closed", float("nan"))
    return {"sessions": sessions, "visitor_answer_seconds": seconds,
            "visitor_answer_median_seconds": statistics.median(seconds), "visitor_explanation_seconds": explained,
            "visitor_explanations_finished_while_abusive_job_queued_or_running": [queued < t < closed
                                                                                  for t in finished],
            "abusive_windows_within_budget": windows, "abuse": abused, "session_exceptions": exceptions,
            "cpu_count": os.cpu_count(), "load_average_at_start": load_at_start}


def abuse_in_own_playwright(url: str, files: tuple[Path, Path], passages: dict[str, str],
                            visitors_done: threading.Event, times: dict) -> dict:
    """Playwright's sync API is bound to its thread: the abusive client drives a browser of its own."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            return abuse(browser, url, files, passages, visitors_done, times)
        except Exception as error:  # reported, not lost with the thread
            return {"abuse_failed": f"{type(error).__name__}: {(str(error).splitlines() or [''])[0]} (line "
                                    f"{traceback.extract_tb(error.__traceback__)[-1].lineno})"}
        finally:
            times["queued"].set()  # the visitors do not wait for a step that failed
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
