"""The cost of scoring every attention head (bench --heads): AttnLRP's relevance per head against today's AttnLRP
explanation of every layer, beside every other registered head score and the knock-outs, on one window of `tokens`
tokens, the runs taking turns so that drift in the speed of shared cores hits each alike."""
from __future__ import annotations

import os
import time
from typing import Callable

import torch

from rcqa.attention_heads import HEAD_SCORES, HeadScore, SharedCase, head_case, knock_out_heads
from rcqa.attention_heads.registry import AttnLRPHeads
from rcqa.attribution.explanation import explain
from rcqa.bench.against_captum import example_of_length
from rcqa.bench.methods.attnlrp import ATTNLRP
from rcqa.model import QAModel

GOAL = 1.5  # issue 44: every head of every layer by AttnLRP in under 1.5× an AttnLRP explanation's time


def fastest_seconds(repeats: int, runs: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Each run's fastest wall-clock seconds of `repeats`, the runs taking turns."""
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, job in runs.items():
            started = time.perf_counter()
            job()
            seconds[name].append(time.perf_counter() - started)
    return {name: min(kept) for name, kept in seconds.items()}


def run(qa_model: QAModel, tokens: int = 256, repeats: int = 3) -> dict:
    """Seconds of an AttnLRP explanation (every layer, explain's own timing left aside: wall clock from the call)
    and of each head score (by its name; each alone, with a case of its own) and the knock-outs on the window of its
    answer, each the fastest of `repeats`."""
    example = example_of_length(qa_model, tokens)
    case = head_case(qa_model, example.passage, example.question)

    def alone(score: HeadScore) -> Callable[[], object]:
        return lambda: score.score(SharedCase(qa_model, case), lambda share, where: None)

    runs: dict[str, Callable[[], object]] = {
        "attnlrp_explanation": lambda: explain(qa_model, example, ATTNLRP),
        **{name: alone(score) for name, score in HEAD_SCORES.items()},
        "knockouts": lambda: knock_out_heads(qa_model, case),
    }
    for job in runs.values():  # warm-up: first-call allocations, the private copies' first build
        job()
    seconds = fastest_seconds(repeats, runs)
    ratio = seconds[AttnLRPHeads.name] / seconds["attnlrp_explanation"]
    return {"model": qa_model.name, "architecture": qa_model.architecture, "device": str(qa_model.device),
            "tokens": int(case.inputs["input_ids"].shape[1]), "repeats": repeats,
            "torch_threads": torch.get_num_threads(), "load_average": os.getloadavg(),
            "seconds": seconds, "attnlrp_per_head_over_explanation": ratio, "goal": GOAL, "met": ratio < GOAL}


def format_table(report: dict) -> str:
    lines = [f"{report['model']} ({report['architecture']}, {report['device']}), {report['tokens']} tokens, "
             f"{report['torch_threads']} torch threads, fastest of {report['repeats']}, load average "
             f"{report['load_average'][0]:.2f}"]
    lines += [f"  {name.replace('_', ' '):24s} {seconds:7.3f} s" for name, seconds in report["seconds"].items()]
    lines.append(f"  AttnLRP per head / AttnLRP explanation: {report['attnlrp_per_head_over_explanation']:.2f}× "
                 f"(goal under {report['goal']}×: {'met' if report['met'] else 'not met'})")
    return "\n".join(lines)
