"""How much to put in one batch on the device at hand: a memory budget from the GPU's free memory, and chunked
work that halves its chunk on out-of-memory and tries again (Captum #150 / #632: users' batches that did not fit).

Everything here runs on the CPU too (device="cpu"), where the budget is the configured one and an out-of-memory
error is what the tests raise on purpose.

Between two chunks nothing is half-done, so chunked work calls checkpoint() there: whoever runs the work (a server's
worker process, rcqa.ui.child) may stop it at that point, or run other work first, by handing checkpoints() what to
do. The handler is held per thread (a context variable), never on the model, which other threads share."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import torch

FREE_SHARE = 0.8  # of the GPU's free memory a batch may take: the rest for the allocator's fragments and the head
# a chunk of path points is expected (rcqa.attribution.cost) to take at most this, where one point does, so that a
# worker reaches its next checkpoint well within the 3 s it is given to stop (rcqa.ui.worker.STOP_GRACE_SECONDS),
# and a short job waiting there starts soon: half of it, for estimates that run up to twice as long
CHECKPOINT_SECONDS = 1.5


def budget_mb(device: torch.device, configured_mb: int) -> int:
    """The memory a batch may take: on a GPU, FREE_SHARE of its free memory now (the configured budget is a CPU's
    size); elsewhere the configured budget."""
    if device.type != "cuda":
        return configured_mb
    free, _ = torch.cuda.mem_get_info(device)
    return max(1, int(FREE_SHARE * free / 2**20))


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
