"""This server's speed, and what one pass through a block costs at it: the terms of the cost model
(rcqa.attribution.cost) that the engine also needs, to size its chunks by time (rcqa.attribution.engine.chunk_size)
without importing the cost model, which calibrates itself by explaining."""
from __future__ import annotations

import os

MULTIPLY_ADDS_PER_TOKEN_BLOCK = 36  # × h²: 12 h² forward, twice that backward
SPEED_ENV = "RCQA_SECONDS_PER_MULTIPLY_ADD"
# seconds per multiply-add on this project's 2 shared CPU cores (python -m rcqa.attribution.cost, docs/serving.md)
SECONDS_PER_MULTIPLY_ADD = 2.5e-11


def server_speed() -> float:
    """This server's seconds per multiply-add: $RCQA_SECONDS_PER_MULTIPLY_ADD, as its operator measured it with
    `python -m rcqa.attribution.cost`, else SECONDS_PER_MULTIPLY_ADD."""
    return float(os.environ.get(SPEED_ENV) or SECONDS_PER_MULTIPLY_ADD)


def pass_seconds(block_passes: float, tokens: int, width: int) -> float:
    """`block_passes` passes (forward and backward) through one block `width` wide over `tokens` tokens, on this
    server."""
    return block_passes * tokens * MULTIPLY_ADDS_PER_TOKEN_BLOCK * width ** 2 * server_speed()


def points_within(seconds: float, blocks: int, targets: int, tokens: int, width: int) -> int:
    """The path points (at least one) whose passes through `blocks` blocks, one for each of `targets`, over
    `tokens` tokens `width` wide are expected to take at most `seconds` on this server: the cost model's terms, a
    chunk's share of an explanation."""
    return max(1, int(seconds / pass_seconds(blocks * targets, tokens, width)))
