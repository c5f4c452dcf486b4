"""What a page still does in its own thread (a script, not a test; docs/serving.md, "Nothing heavy in the page
thread"):

    python -m benchmarks.measure_page_thread [--repeats 5]

With one torch thread, as the server runs on 2 cores: the default model's answer to a one-window and a two-window
passage (what a page answers itself), counting the windows of a 4,000-character passage, refusing a 10 MB paste,
and searching 200,000 uploaded questions with one and five words. Prints the median and the least of the repeats,
with the load average before and after (other work on the cores slows every figure)."""
from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import torch

from rcqa import qa
from rcqa.gallery import gallery_example
from rcqa.model import DEFAULT_MODEL, load_model
from rcqa.types import Example
from rcqa.ui.examples import matching


def timed(work: Callable[[], object], repeats: int) -> str:
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - start)
    return f"median {statistics.median(seconds):.3f} s, least {min(seconds):.3f} s"


def refused(passage: str) -> None:
    try:
        qa.validate_size(passage, "Which word?")
    except qa.InputError:
        return
    raise AssertionError("an oversize passage was not refused")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    torch.set_num_threads(1)
    print("load average", os.getloadavg())
    qa_model = load_model(DEFAULT_MODEL)
    canal = gallery_example("canal-long")
    one_window = canal.passage[:1400]
    qa.answer(qa_model, one_window, canal.question)  # warm-up
    for label, passage in (("one window", one_window), ("two windows", canal.passage)):
        windows = len(qa.encode(qa_model, canal.question, passage))
        print(f"answer, {label} ({windows}):", timed(lambda: qa.answer(qa_model, passage, canal.question), repeats))
    long_text = (canal.passage * 2)[:4000]
    print("windows of 4,000 characters:", timed(lambda: qa.encode(qa_model, canal.question, long_text), repeats))
    paste = "word " * 2_000_000
    print("refusing a 10 MB paste:", timed(lambda: refused(paste), repeats))
    titles = [f"Article number {i} about bridges and things" for i in range(400)]
    questions = [Example(id=str(i), passage="p", title=titles[i % 400],
                         question=f"what is the answer to question {i} of the set abc def ghi?")
                 for i in range(200_000)]
    for text in ("what", "what answer question set abc"):  # every question holds every word: the most work
        print(f"search {text!r} of 200,000 questions:", timed(lambda: matching(questions, text), repeats))
    print("load average", os.getloadavg())


if __name__ == "__main__":
    main()
