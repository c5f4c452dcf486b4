"""How much to put in one batch on the device at hand: a memory budget from the GPU's free memory, and chunked
work that halves its chunk on out-of-memory and tries again (Captum #150 / #632: users' batches that did not fit).

Everything here runs on the CPU too (device="cpu"), where the budget is the configured one and an out-of-memory
error is what the tests raise on purpose.

Between two chunks nothing is half-done, so chunked work calls checkpoint() there: whoever runs the work (a server's
worker process, rcqa.ui.child) may stop it at that point, or run other work first, by handing checkpoints() what to
do. The handler is held per thread (a context variable), never on the model, which other threads share."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import torch

MEMORY_ENV = "RCQA_MEMORY_BUDGET_MB"  # the operator's budget for a batch, over the settings' (the GPU's bounds it)
FREE_SHARE = 0.8  # of the GPU's free memory a batch may take: the rest for the allocator's fragments and the head
# a chunk of path points is expected (rcqa.attribution.cost) to take at most this, where one point does, so that a
# worker reaches its next checkpoint well within the 3 s it is given to stop (rcqa.ui.worker.STOP_GRACE_SECONDS),
# and a short job waiting there starts soon: half of it, for estimates that run up to twice as long
CHECKPOINT_SECONDS = 1.5


def budget_mb(device: torch.device, configured_mb: int) -> float:
    """The memory a batch may take: $RCQA_MEMORY_BUDGET_MB (MB, a fraction allowed) where the operator sets it,
    else the configured budget; on a GPU, never more than FREE_SHARE of its free memory now (the configured budget
    is a CPU's size, so there the free share alone where the operator set nothing)."""
    operators = os.environ.get(MEMORY_ENV, "").strip()
    if device.type != "cuda":
        return float(operators) if operators else configured_mb
    free, _ = torch.cuda.mem_get_info(device)
    free_share = max(1, int(FREE_SHARE * free / 2**20))
    return min(free_share, float(operators)) if operators else free_share


def attention_heads(config) -> int:
    """The model's attention heads, as its config names them (BERT's num_attention_heads, DistilBERT's n_heads)."""
    return getattr(config, "num_attention_heads", getattr(config, "n_heads", 12))


def point_bytes(tokens: int, width: int, heads: int, blocks: int) -> int:
    """What one path point keeps for its backward through `blocks` blocks over `tokens` tokens of width `width`:
    about 14 floats a token and width unit (the blocks' inputs, projections, feed-forward and norms) and 3 of
    attention's tokens × tokens per head, per block, in float32. The smallest chunk of path points holds one."""
    return 4 * blocks * (tokens * 14 * width + 3 * heads * tokens * tokens)


_BETWEEN_CHUNKS: ContextVar[Callable[[], None] | None] = ContextVar("rcqa_between_chunks", default=None)


@contextmanager
def checkpoints(handler: Callable[[], None]) -> Iterator[None]:
    """Within the block, this thread's chunked work calls handler() between its chunks (it may raise, to stop the
    work)."""
    token = _BETWEEN_CHUNKS.set(handler)
    try:
        yield
    finally:
        _BETWEEN_CHUNKS.reset(token)


def checkpoint() -> None:
    """A point between two chunks of work: call this thread's handler, if checkpoints() set one."""
    if (handler := _BETWEEN_CHUNKS.get()) is not None:
        handler()


def in_chunks(total: int, chunk: int, run: Callable[[int, int], None], device: torch.device) -> int:
    """run(begin, end) over [0, total) in chunks of at most `chunk`; a chunk that runs out of memory is tried again
    at half the size (down to one, which re-raises), and later chunks keep the smaller size. Returns the size the
    work ended with. run must leave nothing half-done when it raises (the sums it adds to are added to last)."""
    begin = 0
    while begin < total:
        end = min(total, begin + chunk)
        try:
            run(begin, end)
        except torch.OutOfMemoryError:
            if chunk == 1:
                raise
            chunk = max(1, (end - begin) // 2)
            if device.type == "cuda":
                torch.cuda.empty_cache()
            continue
        begin = end
        checkpoint()
    return chunk
