"""A passage of N windows explained whole (--windows all) against its N windows explained one after another
(bench --windows N): seconds, CPU seconds, path points and peak memory of each side, each in a fresh process."""
from __future__ import annotations

import multiprocessing
import resource
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import torch

from rcqa.attribution.engine import WindowScope, iter_layers
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.targets import Target
from rcqa.attribution.window import explained_window, window_inputs
from rcqa.gallery import GALLERY, gallery_example
from rcqa.model import QAModel
from rcqa.qa import encode
from rcqa.types import Example


def example_of_windows(qa_model: QAModel, windows: int) -> Example:
    """The long gallery passage, then the other gallery passages, cut so that the model reads it in `windows`
    windows (the question and the answer are the long passage's)."""
    source = gallery_example("canal-long")
    words = " ".join([source.passage, *(e.passage for e in GALLERY if e.id != source.id)] * windows).split(" ")

    def count(n: int) -> int:
        return len(encode(qa_model, source.question, " ".join(words[:n])))

    low, high = 1, len(words)
    while low < high:  # the fewest words that need `windows` windows
        middle = (low + high) // 2
        low, high = (middle + 1, high) if count(middle) < windows else (low, middle)
    if count(low) != windows:
        raise ValueError(f"the gallery's passages do not fill {windows} windows of {qa_model.max_len} tokens")
    return Example(id=f"bench-{windows}-windows", passage=" ".join(words[:low]), question=source.question)


def passage_run(model: str, device: str | None = None, random_config: dict | None = None, windows: int = 5,
                settings: ExplainSettings = ExplainSettings(), repeats: int = 1) -> dict:
    """The whole passage (--windows all) against explaining its windows one after another (each window's IG at
    every layer for the same target, at the answer's span in its window and at the window's first passage token
    in the others): seconds, CPU seconds, path points and peak memory of each, each run in a fresh process (so that
    one side's memory is not the other's), the sides taking turns; each side's fastest of `repeats` runs."""
    context = multiprocessing.get_context("spawn")
    runs: dict[str, list[dict]] = {side: [] for side in PASSAGE_SIDES}
    for _ in range(repeats):  # turns, so that drift in shared cores' speed hits both alike
        for side in PASSAGE_SIDES:
            with context.Pool(1) as pool:
                runs[side].append(pool.apply(passage_side, (model, device, random_config, windows,
                                                            settings.to_dict(), side)))
    fastest_runs = {side: min(found, key=lambda run: run["seconds"]) for side, found in runs.items()}
    shared = ("model", "device", "torch_threads", "passage_words")  # the same on both sides
    sequential, together = ({k: v for k, v in fastest_runs[side].items() if k not in shared} for side in PASSAGE_SIDES)
    return {**{k: fastest_runs["whole_passage"][k] for k in shared}, "windows": windows,
            "settings": settings.to_dict(), "repeats": repeats, "one_after_another": sequential, "whole_passage": together,
            "ratio": together["seconds"] / sequential["seconds"],
            "cpu_ratio": together["cpu_seconds"] / sequential["cpu_seconds"]}


PASSAGE_SIDES = ("one_after_another", "whole_passage")


def passage_side(model: str, device: str | None, random_config: dict | None, windows: int, settings: dict,
                 side: str) -> dict:
    """One side of passage_run, in the process that calls it: the model loaded (a random BERT of random_config's
    shape, unless it is None), one small warm-up explanation, then the side measured."""
    from rcqa.model import load_model
    from rcqa.model.random_model import random_bert

    qa_model = load_model(model, device) if random_config is None else random_bert(device, **random_config)
    chosen = ExplainSettings.from_dict(settings)
    example = example_of_windows(qa_model, windows)
    explained = explained_window(qa_model, example, chosen.span, chosen.allow_null)
    explain(qa_model, example, ExplainSettings(steps=2, tolerance=None))  # warm-up: first-call allocations

    blocks = qa_model.num_layers

    def one_after_another() -> dict:
        steps = block_passes = 0
        for window in range(windows):
            inputs = window_inputs(explained.windows, window)
            first = explained.windows.segments[window].index("passage")
            span = (explained.start_token, explained.end_token) if window == explained.window else (first, first)
            targets = [Target(name, *span) for name in chosen.targets]
            for r in iter_layers(WindowScope.of(qa_model, inputs, targets, chosen.baseline), chosen):
                steps += r.completeness[0].steps
                block_passes += r.completeness[0].steps * (blocks - r.layer)
        return {"steps": steps, "block_passes": block_passes}

    def whole() -> dict:
        result = explain(qa_model, example, replace(chosen, windows="all"))
        checks = [c for c in result.completeness if c.target == chosen.targets[0]]
        assert result.windowing.windows_read is not None  # set by every whole-passage explanation
        return {"steps": sum(c.steps for c in checks),
                "block_passes": len(result.windowing.windows_read) * sum(c.steps * (blocks - c.layer) for c in checks),
                "completeness_error": max(c.relative_error for c in result.completeness)}

    measured = _measured(qa_model, one_after_another if side == "one_after_another" else whole)
    return {**measured, "model": qa_model.name, "device": str(qa_model.device),
            "torch_threads": torch.get_num_threads(), "passage_words": len(example.passage.split())}


def _measured(qa_model: QAModel, job: Callable[[], dict]) -> dict:
    """job's own fields with its seconds, its CPU seconds (every thread of the process: on shared cores, steadier
    than the wall clock) and its peak memory: on a GPU the allocator's peak, on a CPU the process's resident set
    sampled every 10 ms, above what it held before (the model and the warm-up)."""
    if qa_model.device.type == "cuda":
        torch.cuda.synchronize(qa_model.device)
        torch.cuda.reset_peak_memory_stats(qa_model.device)
        before = torch.cuda.memory_allocated(qa_model.device)
    started, cpu_started = time.perf_counter(), time.process_time()
    with _rss_sampler() as peak:
        found = job()
    timing = {"seconds": time.perf_counter() - started, "cpu_seconds": time.process_time() - cpu_started}
    if qa_model.device.type == "cuda":
        memory = (torch.cuda.max_memory_allocated(qa_model.device) - before) / 2**20
        return {**found, **timing, "peak_gpu_mb_above_start": memory}
    return {**found, **timing, "peak_rss_mb_above_start": peak["mb"]}


@contextmanager
def _rss_sampler() -> Iterator[dict]:
    def rss_mb() -> float:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / 2**20

    start, peak, done = rss_mb(), {"mb": 0.0}, threading.Event()

    def sample() -> None:
        while not done.wait(0.01):
            peak["mb"] = max(peak["mb"], rss_mb() - start)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


def format_passage_table(report: dict) -> str:
    memory = "peak_gpu_mb_above_start" if "peak_gpu_mb_above_start" in report["whole_passage"] else \
        "peak_rss_mb_above_start"
    rows = [f"model {report['model']}, {report['windows']} windows ({report['passage_words']} words), "
            f"{report['device']}, {report['torch_threads']} threads"]
    for name in ("one_after_another", "whole_passage"):
        side = report[name]
        points = "path points over windows and layers" if name == "one_after_another" else \
            f"path points over layers, each for all {report['windows']} windows"
        rows.append(f"{name.replace('_', ' '):<18}{side['seconds']:>9.1f} s ({side['cpu_seconds']:.1f} CPU s)  "
                    f"{side['steps']:>5} {points} ({side['block_passes']:,} block gradients), peak memory "
                    f"{side[memory]:,.0f} MB")
    rows.append(f"whole / one after another: {report['ratio']:.2f} ({report['cpu_ratio']:.2f} in CPU seconds); worst "
                f"completeness error of the whole passage "
                f"{report['whole_passage']['completeness_error']:.2%}")
    return "\n".join(rows)
