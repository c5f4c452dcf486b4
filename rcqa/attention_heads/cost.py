"""What scoring one question's heads costs before it runs, in rcqa.attribution.cost's model of the work (block passes,
a forward alone FORWARD of one), so that the queue can price it.

Each part's block passes, for a model of L blocks of H heads:

- the knock-outs: the window with every head, and once per head knocked out, through every block: (L·H + 1)·L
  forwards;
- attention attribution: per layer l, STEPS + 2 rows (the rule's nodes, F(0), F(A)) forward through every block and
  backward through the L − l blocks from it up: (STEPS + 2)·(L² FORWARD + (1 − FORWARD)·L(L + 1)/2);
- the gradient importance and AttnLRP per head: one forward and one backward, L passes each;
- the attention patterns: one forward, L forwards.

Calibrated on the gallery's lighthouse question (the default model, 6 blocks × 12 heads, one window of 106 tokens,
one torch thread; docs/heads.md): the knock-outs took 2.3 s, AttnLRP per head 0.45 s, attention attribution 2.7 s
and the gradient 0.06 s. The knock-outs, plain forwards, are the unit: their 146 block passes in 2.3 s make a pass
0.0158 s there; each other part's CALIBRATION is what it measured over what its count predicts at that rate
(batched rows run faster a row than one alone; AttnLRP's rule-modified copy runs slower). The worst case is
WORST_FACTOR times the expected: on 2 shared, loaded cores the same four parts took 1.4 times the expected at the
server's default speed.

In memory, the price carries what the least batch holds, and heads_memory_mb what the whole scoring holds at most
(rcqa.attention_heads.memory).
"""
from __future__ import annotations

from rcqa.attention_heads.attention_attribution import STEPS
from rcqa.attention_heads.memory import HeadsWindow, peak_mb, scoring_budget_mb, smallest_batch_mb
from rcqa.attribution.cost import FORWARD, Price, block_seconds, reading_seconds
from rcqa.model import QAModel

SECONDS_PER_PASS_MEASURED = 2.3 / 146  # the knock-outs' 146 block passes in 2.3 s (module docstring)
MEASURED = {"knockout": 2.3, "attention_attribution": 2.7, "gradient": 0.06, "attnlrp": 0.45}  # seconds
MEASURED_SHAPE = (6, 12)  # the default model's blocks and heads a block, where MEASURED was measured
WORST_FACTOR = 2.0


def structural_passes(layers: int, heads: int) -> dict[str, float]:
    """Each part's block passes as its work counts them (module docstring)."""
    backward_blocks = layers * (layers + 1) / 2  # attention attribution at layer l: back through the L − l above
    return {"knockout": (layers * heads + 1) * layers * FORWARD,
            "attention_attribution": (STEPS + 2) * (layers * layers * FORWARD + (1 - FORWARD) * backward_blocks),
            "gradient": layers, "attnlrp": layers, "patterns": layers * FORWARD}


def _calibration() -> dict[str, float]:
    """Per part: the seconds it measured over what its count predicts at the knock-outs' rate (1 for the knock-outs,
    and for the patterns, not measured apart: a forward, as a knock-out's)."""
    predicted = structural_passes(*MEASURED_SHAPE)
    return {part: MEASURED[part] / (passes * SECONDS_PER_PASS_MEASURED) if part in MEASURED else 1.0
            for part, passes in predicted.items()}


CALIBRATION = _calibration()


def part_passes(layers: int, heads: int) -> dict[str, float]:
    """Each part's block passes, calibrated: what a progress report weighs it by."""
    return {part: CALIBRATION[part] * passes for part, passes in structural_passes(layers, heads).items()}


def heads_passes(layers: int, heads: int) -> float:
    """The block passes of scoring every head and reading every head's attention, calibrated."""
    return sum(part_passes(layers, heads).values())


def heads_price(qa_model: QAModel, windows: int, tokens: int) -> Price:
    """Scoring the heads of one question (rcqa.attention_heads.score_case and head_patterns) on this server: the
    answer read over the passage's `windows`, then the parts on its window of `tokens` tokens; and in memory, what
    its least batch holds (rcqa.attention_heads.memory.smallest_batch_mb: a server whose budget is below it refuses
    the job, as it refuses an explanation whose one path point is over it)."""
    heads = qa_model.config.num_attention_heads
    seconds = (reading_seconds(qa_model, windows, tokens)
               + block_seconds(qa_model, heads_passes(qa_model.num_layers, heads), tokens))
    return Price(seconds, WORST_FACTOR * seconds, smallest_batch_mb(HeadsWindow.of(qa_model, tokens), STEPS))


def heads_memory_mb(qa_model: QAModel, tokens: int, budget_mb: float | None = None) -> float:
    """The most scoring the heads of a window of `tokens` tokens holds over the loaded process, its batches sized to
    `budget_mb` (default: this device's budget, rcqa.attention_heads.memory.scoring_budget_mb)."""
    budget = scoring_budget_mb(qa_model.device) if budget_mb is None else budget_mb
    return peak_mb(HeadsWindow.of(qa_model, tokens), budget, STEPS)
