"""The cost model's prices against measured runs (a script, not a test):

    OMP_NUM_THREADS=1 python -m benchmarks.measure_prices [--cases NAME ...] [--out FILE.jsonl] [--table]

Each case runs one kind of job on a gallery example (or a paste of N windows) with the default model, in this
process with one torch thread (as a worker on a 2-core server runs), not through the result cache: an explanation
with the settings it names, the methods' comparison, the sanity check or the heads' scoring, each priced as the page
queues it. It writes one JSON line: the seconds the job took, the price the server puts on it (expected and at
worst), for an explanation the seconds its answer alone took and the points each layer of the first target spent
(embeddings first), and the machine's load average when it started (other processes on the cores make a run
slower than its price; docs/serving.md: Cost of a job).

`--table` runs one case of each kind of job the dashboard queues (TABLE, unless --cases names others) and writes
their prices against the seconds measured, as a markdown table, into docs/serving.md between its prices markers,
with the date and the load average before and after the runs in its caption."""
from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from rcqa import qa
from rcqa.attention_heads import head_case, head_patterns, heads_price, score_case
from rcqa.attribution.cost import Price, explanation_price, worst_case
from rcqa.attribution.explanation import explain
from rcqa.attribution.methods import COMPARED
from rcqa.attribution.settings import ExplainSettings
from rcqa.faithfulness.compare import Protocol, compare
from rcqa.faithfulness.cost import comparison_seconds
from rcqa.faithfulness.sanity import sanity_checks, sanity_price
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.types import Example

ATTNLRP: dict[str, Any] = dict(method="attnlrp", targets=("span_logits",))
EXPLAINED = {  # name: (gallery example, settings)
    "short-ig": ("lighthouse-when", ExplainSettings()),
    "short-attnlrp": ("lighthouse-when", ExplainSettings(**ATTNLRP)),
    "short-ig-steps1-tol0.001": ("lighthouse-when", ExplainSettings(steps=1, tolerance=0.001)),
    "short-ig-riemann32": ("lighthouse-when", ExplainSettings(rule="riemann_right", steps=32, tolerance=None)),
    "long-ig": ("canal-long", ExplainSettings()),
    "long-attnlrp": ("canal-long", ExplainSettings(**ATTNLRP)),
    "long-ig-all-windows": ("canal-long", ExplainSettings(windows="all")),
    "paste32-ig": ("paste:32", ExplainSettings()),
}
OTHER_JOBS = {"short-compare": "lighthouse-when", "short-sanity": "lighthouse-when", "short-heads": "lighthouse-when"}
CASES = [*EXPLAINED, *OTHER_JOBS]
TABLE = {"short-ig": "explanation, default settings", "short-attnlrp": "explanation, AttnLRP",
         "long-ig-all-windows": "explanation, whole passage (2 windows)", "short-compare": "methods' comparison",
         "short-sanity": "sanity check (every method)", "short-heads": "heads' scoring"}
DOC, BEGIN, END = Path("docs/serving.md"), "<!-- prices:begin -->", "<!-- prices:end -->"


def example_of(name: str) -> Example:
    """A gallery example, or "paste:N": a pasted passage of N windows (benchmarks.measure_abuse)."""
    if name.startswith("paste:"):
        from benchmarks.long_passages import QUESTION, passage_of_windows

        return Example(id=name, passage=passage_of_windows(int(name.removeprefix("paste:"))), question=QUESTION)
    return gallery_example(name)


def measured(qa_model, name: str) -> dict:
    example_id = EXPLAINED[name][0] if name in EXPLAINED else OTHER_JOBS[name]
    example = example_of(example_id)
    encoded = qa.encode(qa_model, example.question, example.passage)
    tokens = int(encoded.inputs["attention_mask"][0].sum()) if len(encoded) == 1 else qa_model.max_len
    price, run, windows = priced_job(qa_model, name, example, tokens, len(encoded))
    load = os.getloadavg()[0]
    reading = 0.0
    if name in EXPLAINED:
        started = time.perf_counter()
        qa.answer(qa_model, example.passage, example.question)
        reading = time.perf_counter() - started
    started = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - started
    line = {"case": name, "example": example_id, "windows": windows, "passage_windows": len(encoded),
            "tokens": tokens, "seconds": round(seconds, 2), "expected": round(price.seconds, 2),
            "worst": round(price.most, 2), "load_average": round(load, 2)}
    if name in EXPLAINED:
        line["answer_seconds"] = round(reading, 2)
        line["points_per_layer"] = [c.steps for c in result.completeness if c.target == result.completeness[0].target]
    return line


def priced_job(qa_model, name: str, example: Example, tokens: int,
               passage_windows: int) -> tuple[Price, Callable[[], Any], int]:
    """The case's price as the page queues it, the job itself, and the windows it explains."""
    settings = ExplainSettings()
    if name == "short-compare":  # rcqa.ui.results.comparisons.comparison_price
        protocol = Protocol()
        expected, worst = (comparison_seconds(qa_model, chosen, COMPARED, protocol, tokens)
                           for chosen in (settings, worst_case(settings)))
        return (Price(expected, worst), lambda: compare(qa_model, example, protocol=protocol, settings=settings), 1)
    if name == "short-sanity":  # rcqa.ui.sanity.sanity_section, every method chosen
        return (sanity_price(qa_model, settings, COMPARED, tokens),
                lambda: sanity_checks(qa_model, example, COMPARED, settings), 1)
    if name == "short-heads":  # rcqa.ui.heads.scored_heads and rcqa.ui.worker.heads
        def scored() -> Any:
            case = head_case(qa_model, example.passage, example.question)
            return score_case(qa_model, example, case), head_patterns(qa_model, case)
        return heads_price(qa_model, passage_windows, tokens), scored, 1
    _, settings = EXPLAINED[name]
    windows = passage_windows if settings.windows == "all" else 1
    return (explanation_price(qa_model, settings, windows, tokens, passage_windows=passage_windows),
            lambda: explain(qa_model, example, settings), windows)


def price_table(lines: list[dict], date: str, loads: tuple[float, float]) -> str:
    """The measured lines as the markdown table docs/serving.md shows: each job's price, the seconds it took, and
    their ratio, with how it was measured."""
    rows = "\n".join(f"| {TABLE.get(line['case'], line['case'])} | {line['expected']:.1f} | {line['seconds']:.1f} | "
                     f"{line['seconds'] / line['expected']:.2f} | {line['load_average']:.1f} |" for line in lines)
    return (f"Measured {date} with `OMP_NUM_THREADS=1 python -m benchmarks.measure_prices --table` (the default "
            f"model, the gallery's lighthouse-when, and canal-long for the whole passage; one torch thread, not "
            f"through the cache, at niceness {os.nice(0)}), **on this project's 2 cores shared with other "
            f"engineers' work** (load average "
            f"{loads[0]:.1f} before the runs, {loads[1]:.1f} after): not quiet cores, so a ratio over 1 is partly "
            "the load's.\n\n"
            "| job | priced (s) | measured (s) | measured / priced | load average at its start |\n"
            f"|---|---|---|---|---|\n{rows}\n")


def with_table(document: str, table: str) -> str:
    """The document with the table between its prices markers (ValueError where it has none)."""
    if BEGIN not in document or END not in document:
        raise ValueError(f"{DOC} has no {BEGIN} … {END} markers for the table")
    head, rest = document.split(BEGIN, 1)
    return f"{head}{BEGIN}\n{table}{END}{rest.split(END, 1)[1]}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", nargs="*", choices=CASES, default=None)
    parser.add_argument("--out", default="")
    parser.add_argument("--table", action="store_true", help="write the table into docs/serving.md")
    args = parser.parse_args()
    cases = args.cases or (list(TABLE) if args.table else CASES)
    torch.set_num_threads(1)
    qa_model = load_model()
    before, lines = os.getloadavg()[0], []
    for name in cases:
        lines.append(measured(qa_model, name))
        line = json.dumps(lines[-1])
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as out:
                out.write(line + "\n")
    if args.table:
        table = price_table(lines, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), (before, os.getloadavg()[0]))
        DOC.write_text(with_table(DOC.read_text(), table))


if __name__ == "__main__":
    main()
