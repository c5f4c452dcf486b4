"""What a job holds at most over the loaded process, measured as the kernel counts it: run in a process of its own
(forked as the app's workers are; or `python -m tests.helpers.peak_memory JOB MODEL`), with one torch thread as a
worker on a small machine has, the model loaded and the job's input built first; then the resident set's high-water
mark is reset (/proc/self/clear_refs, "5"), the job runs once, and its peak over the resident set before it (VmHWM −
VmRSS, in MB) is returned (printed as JSON) with what the job's price says. Linux only."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from rcqa.ui.worker.process import worker_context


def _status() -> dict[str, float]:
    text = Path("/proc/self/status").read_text()
    return {name: int(re.search(rf"{name}:\s+(\d+) kB", text)[1]) / 1024 for name in ("VmRSS", "VmHWM")}


def window_passage(tokens: int) -> tuple[str, str]:
    """A gallery question whose answer's window is full (`tokens` long or the model's longest): canal-long's
    passage with the other examples' passages after it."""
    from rcqa.gallery import GALLERY, gallery_example

    canal = gallery_example("canal-long")
    return canal.passage + " " + " ".join(e.passage for e in GALLERY if e.id != "canal-long"), canal.question


def _heads(qa_model, passage: str, question: str):
    """The worker's heads task (rcqa.ui.worker: score_case, then head_patterns, on the answer's window)."""
    from rcqa.attention_heads import head_case, head_patterns, heads_memory_mb, score_case
    from rcqa.types import Example

    case = head_case(qa_model, passage, question)
    example = Example(id="memory", passage=passage, question=question)
    figure = heads_memory_mb(qa_model, len(case.tokens))
    return (lambda: (score_case(qa_model, example, case), head_patterns(qa_model, case))), figure, len(case.tokens)


def _within_budget(build):
    """A job whose price has no figure of its own (rcqa.attribution.cost.Price holds only the least batch of path
    points), held against what the server promises every job: its memory budget (rcqa.ui.capacity.memory_budget),
    its least batch where that is more, and the interpreter's own working share."""
    def job(qa_model, passage: str, question: str):
        from rcqa.attention_heads.memory import WORKING_MB
        from rcqa.types import Example
        from rcqa.ui.capacity import memory_budget

        example = Example(id="memory", passage=passage, question=question)
        run, point_mb, tokens = build(qa_model, example)
        return run, max(memory_budget(), point_mb or 0.0) + WORKING_MB, tokens
    return job


def _explanation(qa_model, example):
    from rcqa.attribution.cost import point_memory_mb
    from rcqa.attribution.explanation import explain
    from rcqa.attribution.settings import ExplainSettings

    tokens = min(qa_model.max_len, 384)
    return lambda: explain(qa_model, example, ExplainSettings()), point_memory_mb(qa_model, tokens), tokens


def _comparison(qa_model, example):
    from rcqa.attribution.cost import point_memory_mb
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.faithfulness.compare import Protocol, compare

    tokens = min(qa_model.max_len, 384)
    return (lambda: compare(qa_model, example, protocol=Protocol(), settings=ExplainSettings()),
            point_memory_mb(qa_model, tokens), tokens)


def _sanity(qa_model, example):
    from rcqa.attribution.cost import point_memory_mb
    from rcqa.attribution.methods import COMPARED
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.faithfulness.sanity import sanity_checks

    tokens = min(qa_model.max_len, 384)
    # IG on a fixed rule of 8 points: a chunk of path points, bounded by the memory budget however many the adaptive
    # rule would refine to, is what peaks (refining only adds chunks: on the randomised copies, many of them)
    settings = ExplainSettings(tolerance=None)
    return lambda: sanity_checks(qa_model, example, COMPARED, settings), point_memory_mb(qa_model, tokens), tokens


def _lens(qa_model, example):
    from rcqa.lens import answer_lens

    return lambda: answer_lens(qa_model, example), None, min(qa_model.max_len, 384)


def _interventions(qa_model, example):
    from rcqa.attribution.explanation import explain
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.lens.interventions import intervene

    result = explain(qa_model, example, ExplainSettings(steps=2, tolerance=None))
    return lambda: intervene(qa_model, result, k=5, draws=5, baseline="pad"), None, len(result.tokens)


def _reading(qa_model, example):
    from rcqa.qa import MAX_PASSAGE_WORDS, MAX_WINDOWS, read
    from rcqa.ui.capacity import passage_windows

    words = example.passage.split()
    words = words * (1 + MAX_PASSAGE_WORDS // len(words))
    low, high = 1, MAX_PASSAGE_WORDS  # the longest paste taken: 10,000 words, or 128 windows where fewer words fill them
    while low < high:
        middle = (low + high + 1) // 2
        fits = passage_windows(qa_model, " ".join(words[:middle]), example.question) <= MAX_WINDOWS
        low, high = (middle, high) if fits else (low, middle - 1)
    long = " ".join(words[:low])
    return lambda: read(qa_model, long, example.question), None, qa_model.max_len


JOBS = {"heads": _heads, **{name: _within_budget(build) for name, build in (
    ("explanation", _explanation), ("comparison", _comparison), ("sanity", _sanity), ("lens", _lens),
    ("interventions", _interventions), ("reading", _reading))}}


def _measure(job: str, model: str, environment: dict[str, str]) -> dict:
    """The job's peak over the loaded process (see the module's docstring), in this process, as JSON's fields."""
    import torch

    from rcqa.attention_heads.memory import give_back_freed
    from rcqa.model import load_model

    os.environ.clear()  # the caller's, not the fork server's from when it started
    os.environ.update(environment)
    torch.set_num_threads(1)
    qa_model = load_model(model)
    run, figure, tokens = JOBS[job](qa_model, *window_passage(qa_model.max_len))
    give_back_freed()  # what building the input freed is not the loaded process's: the baseline is what it holds
    Path("/proc/self/clear_refs").write_text("5")
    before = _status()["VmRSS"]
    run()
    return {"peak_mb": _status()["VmHWM"] - before, "figure_mb": figure, "tokens": tokens, "loaded_mb": before}


def main() -> None:
    print(json.dumps(_measure(sys.argv[1], sys.argv[2], dict(os.environ))))


def measured(job: str, model: str) -> dict:
    """The job's peak over its loaded process and its price's figure, measured in a process of its own, forked as
    the app's workers are from the fork server that has imported torch and the library (not importing them again
    saves about 3 s a job; the process then holds what a worker holds)."""
    with worker_context().Pool(1) as pool:
        return pool.apply_async(_measure, (job, model, dict(os.environ))).get(timeout=900)


if __name__ == "__main__":
    main()
