"""What scoring a question's heads holds, and how much of it goes in one batch, so that it stays within the memory
budget an explanation's path points keep to (rcqa.attribution.memory: $RCQA_MEMORY_BUDGET_MB, 1,024 MB on a CPU).

Before, attention attribution ran its 10 rows (8 nodes, F(0), F(A)) with gradients in one batch: +1,211 MB over the
loaded process for one 384-token window of the default model, past the budget, in a worker the 2 GB bound of
docs/serving.md counts on. Each part is sized in rcqa.attribution.memory.point_bytes, the formula the
explanation's chunks are sized by (a score's part by its class, memory_bytes; the knock-outs' and the patterns'
here), for a window of `tokens` tokens of a model `width` wide with `heads` heads a block and `layers` blocks:

- attention attribution at layer l: a row keeps for its backward the blocks from l up, point_bytes(L − l); rows go
  in chunks within the budget (and within CHECKPOINT_SECONDS, so that a stop or a short job waits little), and F(0)
  and F(A) run without gradients;
- the knock-outs: a forward without gradients holds one block's work a row at a time, point_bytes(1) a row;
  ROWS_PER_FORWARD rows, fewer where they would pass the budget;
- AttnLRP per head and the gradient importance: one pass back through every block, point_bytes(L), and AttnLRP's
  rule-modified copy keeps each step's own inputs as well (LRP_SHARE more);
- the patterns: every block's attention maps (L · heads · tokens² floats) and one block's work.

The formula is an upper bound of what was measured (+194 MB for AttnLRP at 384 tokens against 169 MB by the formula
before LRP_SHARE; attention attribution's rows 0.7 of it), and WORKING_MB covers the interpreter's own part: the
private copies' modules and Python's objects, which a tiny model's bytes cannot.

What the process holds is more than what its tensors hold: glibc keeps the pages of freed blocks under its mmap
threshold (which it raises to 32 MB as large blocks are freed) for its next allocations, so each batch and part
left its pages behind and the next one added its own. Scoring the heads of a 384-token window of the default model
held +850-959 MB over the loaded process where its tensors held at most 680; handing the freed pages back after
each batch and part (give_back_freed, glibc's malloc_trim: 0.2-0.4 s over the whole job) held +625-632 MB."""
from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass

import torch

from rcqa.attribution.memory import CHECKPOINT_SECONDS, attention_heads, budget_mb, point_bytes
from rcqa.attribution.speed import points_within
from rcqa.model import QAModel
from rcqa.types.settings import ExplainSettings

ROWS_PER_FORWARD = 32  # knocked-out copies of the window per batched forward, where the budget allows
LRP_SHARE = 1.5  # AttnLRP's rule-modified pass against a plain backward's point_bytes
WORKING_MB = 48  # the interpreter's own share of a part, whatever the model's size (module docstring)


_LIBC = ctypes.CDLL(ctypes.util.find_library("c")) if ctypes.util.find_library("c") else None


def give_back_freed() -> None:
    """Hand the pages of the blocks freed so far back to the system where the C library can (glibc's malloc_trim;
    elsewhere nothing): between two batches, the next one's tensors then take pages afresh rather than add to the
    ones the last left (module docstring)."""
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)


@dataclass(frozen=True)
class HeadsWindow:
    """The shape of the window the heads are scored on."""

    tokens: int
    width: int
    heads: int
    layers: int

    @classmethod
    def of(cls, qa_model: QAModel, tokens: int) -> HeadsWindow:
        config = qa_model.config
        width = int(getattr(config, "hidden_size", None) or getattr(config, "dim"))
        return cls(tokens, width, attention_heads(config), qa_model.num_layers)

    def bytes(self, blocks: int) -> int:
        """What a row keeps for its backward through `blocks` blocks (rcqa.attribution.memory.point_bytes)."""
        return point_bytes(self.tokens, self.width, self.heads, blocks)

    @property
    def maps_bytes(self) -> int:
        """One block's attention maps of one row: heads × tokens² floats."""
        return 4 * self.heads * self.tokens ** 2


def scoring_budget_mb(device: torch.device) -> float:
    """The MB one batch of the heads' work may hold: the explanations' budget on this device
    (rcqa.attribution.memory.budget_mb)."""
    return budget_mb(device, ExplainSettings().memory_budget_mb)


def attribution_rows(window: HeadsWindow, layer: int, steps: int, budget: float) -> int:
    """Attention attribution's rows with gradients at `layer` in one batch: as many of the `steps` as fit `budget`
    MB and CHECKPOINT_SECONDS, at least one."""
    blocks = window.layers - layer
    by_memory = int(budget * 2**20 // window.bytes(blocks))
    by_time = points_within(CHECKPOINT_SECONDS, blocks, 1, window.tokens, window.width)
    return max(1, min(steps, by_memory, by_time))


def knockout_rows(window: HeadsWindow, budget: float) -> int:
    """Knocked-out rows per forward: ROWS_PER_FORWARD, fewer where their blocks' work would pass `budget` MB."""
    return max(1, min(ROWS_PER_FORWARD, int(budget * 2**20 // window.bytes(1))))


def knockout_bytes(window: HeadsWindow, budget: float) -> int:
    """What the knock-outs' largest batch holds: its rows' forward, one block's work each."""
    return knockout_rows(window, budget) * window.bytes(1)


def patterns_bytes(window: HeadsWindow) -> int:
    """What reading every head's attention holds: every block's maps of one row and one block's work."""
    return window.layers * window.maps_bytes + window.bytes(1)
