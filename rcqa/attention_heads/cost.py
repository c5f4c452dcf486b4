"""What scoring one question's heads costs before it runs, in rcqa.attribution.cost's model of the work (block passes,
a forward alone FORWARD of one), so that the queue can price it.

Each part's block passes, for a model of L blocks of H heads: each registered score's pass as its class counts it
(rcqa.attention_heads.registry: attention attribution (STEPS + 2)·(L² FORWARD + (1 − FORWARD)·L(L + 1)/2), the
gradient and AttnLRP per head L each; a pass two scores read counted once); the knock-outs, the window with every
head and once per head knocked out through every block, (L·H + 1)·L forwards; the attention patterns, L forwards.

Calibrated on the gallery's lighthouse question (the default model, 6 blocks × 12 heads, one window of 106 tokens,
one torch thread; docs/heads.md): the knock-outs took 2.3 s, AttnLRP per head 0.45 s, attention attribution 2.7 s
and the gradient 0.06 s. The knock-outs, plain forwards, are the unit: their 146 block passes in 2.3 s make a pass
0.0158 s there; each score's calibration is what it measured (its measured_seconds) over what its count predicts
at that rate (batched rows run faster a row than one alone; AttnLRP's rule-modified copy runs slower). The worst case is
WORST_FACTOR times the expected: on 2 shared, loaded cores the same four parts took 1.4 times the expected at the
server's default speed.

In memory, the price carries what the least batch holds, and heads_memory_mb what the whole scoring holds at most
(rcqa.attention_heads.memory).
"""
from __future__ import annotations

from rcqa.attention_heads.memory import (WORKING_MB, HeadsWindow, knockout_bytes, patterns_bytes,
                                        scoring_budget_mb)
from rcqa.attention_heads.registry import HEAD_SCORES, HeadScore
from rcqa.attribution.cost import FORWARD, Price, block_seconds, reading_seconds
from rcqa.model import QAModel

KNOCKOUT_SECONDS = 2.3  # the knock-outs on the lighthouse question (module docstring)
SECONDS_PER_PASS_MEASURED = KNOCKOUT_SECONDS / 146  # their 146 block passes
MEASURED_SHAPE = (6, 12)  # the default model's blocks and heads a block, where the parts were measured
WORST_FACTOR = 2.0
KNOCKOUT, PATTERNS = "knockout", "patterns"  # the two parts of the work that are no score


def calibration(score: HeadScore) -> float:
    """The seconds its pass measured over what its count predicts at the knock-outs' rate."""
    return score.measured_seconds / (score.passes(*MEASURED_SHAPE) * SECONDS_PER_PASS_MEASURED)


def part_passes(layers: int, heads: int) -> dict[str, float]:
    """Each part's block passes, calibrated (what a progress report weighs it by), in the order score_case runs
    them: each registered score's pass (one that two scores read counted once, under its pass_name), the knock-outs
    ((L·H + 1)·L forwards, the unit), and the patterns (a forward, not measured apart: as a knock-out's)."""
    parts: dict[str, float] = {}
    for score in HEAD_SCORES.values():
        parts.setdefault(score.pass_name, calibration(score) * score.passes(layers, heads))
    return {**parts, KNOCKOUT: (layers * heads + 1) * layers * FORWARD, PATTERNS: layers * FORWARD}


def heads_passes(layers: int, heads: int) -> float:
    """The block passes of scoring every head and reading every head's attention, calibrated."""
    return sum(part_passes(layers, heads).values())


def part_bytes(window: HeadsWindow, budget: float) -> dict[str, int]:
    """The most each part holds over the loaded process, WORKING_MB aside (rcqa.attention_heads.memory)."""
    return {**{score.pass_name: score.memory_bytes(window, budget) for score in HEAD_SCORES.values()},
            KNOCKOUT: knockout_bytes(window, budget), PATTERNS: patterns_bytes(window)}


def smallest_batch_mb(window: HeadsWindow) -> float:
    """What the least batch of the scoring holds: its largest part with every chunk one row (attention attribution's
    row at the embeddings' layer, AttnLRP's pass or the patterns, which no chunk makes smaller). Over the budget,
    the scoring cannot keep to it."""
    return max(part_bytes(window, 0.0).values()) / 2**20  # a budget of nothing: every chunk is one row


def heads_price(qa_model: QAModel, windows: int, tokens: int) -> Price:
    """Scoring the heads of one question (rcqa.attention_heads.score_case and head_patterns) on this server: the
    answer read over the passage's `windows`, then the parts on its window of `tokens` tokens; and in memory, what
    its least batch holds (smallest_batch_mb: a server whose budget is below it refuses the job, as it refuses an
    explanation whose one path point is over it)."""
    heads = qa_model.config.num_attention_heads
    seconds = (reading_seconds(qa_model, windows, tokens)
               + block_seconds(qa_model, heads_passes(qa_model.num_layers, heads), tokens))
    return Price(seconds, WORST_FACTOR * seconds, smallest_batch_mb(HeadsWindow.of(qa_model, tokens)))


def heads_memory_mb(qa_model: QAModel, tokens: int, budget_mb: float | None = None) -> float:
    """The most scoring the heads of a window of `tokens` tokens holds over the loaded process (its largest part),
    its batches sized to `budget_mb` (default: this device's budget, rcqa.attention_heads.memory.scoring_budget_mb)."""
    budget = scoring_budget_mb(qa_model.device) if budget_mb is None else budget_mb
    return max(part_bytes(HeadsWindow.of(qa_model, tokens), budget).values()) / 2**20 + WORKING_MB
