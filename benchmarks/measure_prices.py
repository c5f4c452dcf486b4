"""The cost model's prices against measured runs (a script, not a test):

    OMP_NUM_THREADS=1 python -m benchmarks.measure_prices [--cases NAME ...] [--out FILE.jsonl]

Each case explains a gallery example (or a paste of N windows) with the default model and the settings it names, in
this process with one torch thread (as a worker on a 2-core server runs), not through the result cache, and writes
one JSON line: the seconds the explanation took (its answer included) and the answer alone took, the price the
server puts on it (expected and at worst, rcqa.attribution.cost), the points each layer of the first target spent
(embeddings first), and the machine's load average when it started (other processes on the cores make a run
slower than its price; docs/serving.md: Cost of a job)."""
from __future__ import annotations

import argparse
import json
import os
import time

import torch

from rcqa import qa
from rcqa.attribution.cost import explanation_price
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.types import Example

ATTNLRP = dict(method="attnlrp", targets=("span_logits",))
CASES = {  # name: (gallery example, settings)
    "short-ig": ("lighthouse-when", ExplainSettings()),
    "short-attnlrp": ("lighthouse-when", ExplainSettings(**ATTNLRP)),
    "short-ig-steps1-tol0.001": ("lighthouse-when", ExplainSettings(steps=1, tolerance=0.001)),
    "short-ig-riemann32": ("lighthouse-when", ExplainSettings(rule="riemann_right", steps=32, tolerance=None)),
    "long-ig": ("canal-long", ExplainSettings()),
    "long-attnlrp": ("canal-long", ExplainSettings(**ATTNLRP)),
    "long-ig-all-windows": ("canal-long", ExplainSettings(windows="all")),
    "paste32-ig": ("paste:32", ExplainSettings()),
}


def example_of(name: str) -> Example:
    """A gallery example, or "paste:N": a pasted passage of N windows (benchmarks.measure_abuse)."""
    if name.startswith("paste:"):
        from benchmarks.measure_abuse import QUESTION, passage_of_windows

        return Example(id=name, passage=passage_of_windows(int(name.removeprefix("paste:"))), question=QUESTION)
    return gallery_example(name)


def measured(qa_model, name: str) -> dict:
    example_id, settings = CASES[name]
    example = example_of(example_id)
    encoded = qa.encode(qa_model, example.question, example.passage)
    windows = len(encoded) if settings.windows == "all" else 1
    tokens = int(encoded.inputs["attention_mask"][0].sum()) if len(encoded) == 1 else qa_model.max_len
    price = explanation_price(qa_model, settings, windows, tokens, passage_windows=len(encoded))
    load = os.getloadavg()[0]
    started = time.perf_counter()
    qa.answer(qa_model, example.passage, example.question)
    reading = time.perf_counter() - started
    started = time.perf_counter()
    result = explain(qa_model, example, settings)
    seconds = time.perf_counter() - started
    points = [c.steps for c in result.completeness if c.target == result.completeness[0].target]
    return {"case": name, "example": example_id, "windows": windows, "passage_windows": len(encoded),
            "tokens": tokens, "seconds": round(seconds, 2), "answer_seconds": round(reading, 2),
            "expected": round(price.seconds, 2), "worst": round(price.most, 2), "points_per_layer": points,
            "load_average": round(load, 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    torch.set_num_threads(1)
    qa_model = load_model()
    for name in args.cases:
        line = json.dumps(measured(qa_model, name))
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as out:
                out.write(line + "\n")


if __name__ == "__main__":
    main()
