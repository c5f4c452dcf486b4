"""How much to put in one batch on the device at hand: a memory budget from the GPU's free memory, and chunked
work that halves its chunk on out-of-memory and tries again (Captum #150 / #632: users' batches that did not fit).

Everything here runs on the CPU too (device="cpu"), where the budget is the configured one and an out-of-memory
error is what the tests raise on purpose."""
from __future__ import annotations

from collections.abc import Callable

import torch

FREE_SHARE = 0.8  # of the GPU's free memory a batch may take: the rest for the allocator's fragments and the head


def budget_mb(device: torch.device, configured_mb: int) -> int:
    """The memory a batch may take: on a GPU, FREE_SHARE of its free memory now (the configured budget is a CPU's
    size); elsewhere the configured budget."""
    if device.type != "cuda":
        return configured_mb
    free, _ = torch.cuda.mem_get_info(device)
    return max(1, int(FREE_SHARE * free / 2**20))


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
    return chunk
