"""What the answer lens, a contrast's margins and the interventions cost before they run, in rcqa.attribution.cost's
model of the work (block passes, a forward alone FORWARD of one), so that the queue can price them."""
from __future__ import annotations

from rcqa.attribution.cost import FORWARD, block_seconds, reading_seconds
from rcqa.lens.interventions import KNOCKOUT_BASELINES
from rcqa.model import QAModel


def lens_seconds(qa_model: QAModel, windows: int, tokens: int) -> float:
    """The answer lens (rcqa.lens.readout.read_layers): the answer read over the passage's `windows`, then every
    window's layer outputs recorded by a second forward (the head and probes on them cost next to nothing)."""
    return 2 * reading_seconds(qa_model, windows, tokens)


def margins_seconds(qa_model: QAModel, windows: int, tokens: int) -> float:
    """A contrast's margins (rcqa.lens.contrast.contrast_margins): a forward of the span's window and the foil's
    (`windows`: 1 where they share one, else 2)."""
    return reading_seconds(qa_model, windows, tokens)


def interventions_seconds(qa_model: QAModel, tokens: int, draws: int, baseline: str) -> float:
    """The interventions of one window (rcqa.lens.interventions.intervene), in block forwards: the window's own
    (L) and its baseline input's, where the baseline is one (L); at the output of each layer l, its top-k, bottom-k
    and `draws` random sets knocked out, each run through the L − l blocks above (Σ = L (L + 1) / 2 per set); and
    each block skipped, the blocks from it up run again (L (L + 1) / 2 more)."""
    if baseline not in KNOCKOUT_BASELINES:
        raise ValueError(f"unknown knock-out baseline {baseline!r}; choose one of {', '.join(KNOCKOUT_BASELINES)}")
    blocks = qa_model.num_layers
    above = blocks * (blocks + 1) // 2
    recorded = blocks * (1 + (baseline != "zero"))
    return block_seconds(qa_model, FORWARD * (recorded + (2 + draws + 1) * above), tokens)
