"""What an explanation will cost before it runs, so that a server can say how long it will take and refuse what
is over its budget instead of queueing it.

The work of layer-wise IG is path points run forward and backward through the blocks above each layer: at the
output of layer l of a model of L blocks, L − l blocks, so Σ_l (L − l) = L (L + 1) / 2 block passes per path point
over the whole explanation. Each is, per token, about 12 h² multiply-adds forward (attention's four projections
and the feed-forward's two, for a model of width h and a feed-forward 4h wide) and twice that backward. So

    work = windows read × tokens per window × L (L + 1) / 2 × expected points per layer × targets × 36 h²

in multiply-adds (attention's tokens² terms and the QA head left out: under a tenth at 384 tokens), and the
seconds are work × a server's seconds per multiply-add, measured once on that server by `python -m
rcqa.attribution.cost` (docs/serving.md: Cost of a job).

Expected points: a fixed rule takes its steps. The adaptive rule (Gauss–Legendre with a tolerance) starts from
its steps and refines the panels that miss the tolerance, up to max_steps: ADAPTIVE_GROWTH is what it spent on
the gallery with the default model, weighted as the work is (the lower layers, which run the most blocks, take
the most points).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass

from rcqa.attribution.quadrature import adaptive
from rcqa.attribution.settings import IGSettings
from rcqa.model import QAModel

ADAPTIVE_GROWTH = 1.5  # the adaptive rule's points per layer, over its starting `steps` (module docstring)
MULTIPLY_ADDS_PER_TOKEN_BLOCK = 36  # × h²: 12 h² forward, twice that backward
SPEED_ENV = "RCQA_SECONDS_PER_MULTIPLY_ADD"
# seconds per multiply-add on this project's 2 shared CPU cores (python -m rcqa.attribution.cost, docs/serving.md)
SECONDS_PER_MULTIPLY_ADD = 5.0e-11


@dataclass(frozen=True)
class Cost:
    """The parts of an explanation's work (module docstring)."""

    windows: int
    tokens: int  # per window
    blocks: int  # L
    points: float  # expected per layer
    targets: int
    width: int  # h

    @property
    def block_passes(self) -> int:
        """Block passes per path point over every layer: L − l at the output of layer l = 0 … L."""
        return self.blocks * (self.blocks + 1) // 2

    @property
    def multiply_adds(self) -> float:
        return (self.windows * self.tokens * self.block_passes * self.points * self.targets
                * MULTIPLY_ADDS_PER_TOKEN_BLOCK * self.width ** 2)

    def seconds(self, seconds_per_multiply_add: float | None = None) -> float:
        """The expected seconds, at seconds_per_multiply_add (this server's, server_speed(), by default)."""
        return self.multiply_adds * (server_speed() if seconds_per_multiply_add is None else seconds_per_multiply_add)


def server_speed() -> float:
    """This server's seconds per multiply-add: $RCQA_SECONDS_PER_MULTIPLY_ADD, as its operator measured it with
    `python -m rcqa.attribution.cost`, else SECONDS_PER_MULTIPLY_ADD."""
    return float(os.environ.get(SPEED_ENV) or SECONDS_PER_MULTIPLY_ADD)


def expected_points(settings: IGSettings) -> float:
    """Path points a layer the settings are expected to spend: a fixed rule's steps, or the adaptive rule's
    starting steps grown as measured (ADAPTIVE_GROWTH), never past max_steps."""
    if settings.tolerance is not None and adaptive(settings.rule):
        return min(settings.max_steps, settings.steps * ADAPTIVE_GROWTH)
    return settings.steps


def model_width(qa_model: QAModel) -> int:
    """The model's hidden size, as its config names it (BERT's hidden_size, DistilBERT's dim)."""
    config = qa_model.config
    return int(getattr(config, "hidden_size", None) or getattr(config, "dim"))


def explanation_cost(qa_model: QAModel, settings: IGSettings, windows: int, tokens: int) -> Cost:
    """The cost of explaining `windows` windows of `tokens` tokens each (the whole passage's, or the one window's)
    with these settings. Every window counts as read: the default target's softmax reads them all (the logit
    targets read one or two, so for them this is an upper bound). AttnLRP is one forward and one backward pass
    through every block, as one path point of the embeddings' layer is (L block passes: points 2 / (L + 1) over
    L (L + 1) / 2)."""
    targets = len(settings.targets) + bool(settings.contrast)
    blocks = qa_model.num_layers
    points = 2 / (blocks + 1) if settings.method == "attnlrp" else expected_points(settings)
    return Cost(windows=windows, tokens=tokens, blocks=blocks, points=points, targets=targets,
                width=model_width(qa_model))


def in_words(seconds: float) -> str:
    """A duration as a person says it: "a few seconds", "about 40 seconds", "about 3 minutes", "about 1 hour 5
    minutes"."""
    if seconds < 10:
        return "a few seconds"
    if seconds < 90:
        return f"about {round(seconds, -1):.0f} seconds"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} minutes"
    hours, rest = divmod(minutes, 60)
    return f"about {hours} hour{'s' * (hours > 1)}" + (f" {rest} minutes" if rest else "")


def calibrate(qa_model: QAModel, example, settings: IGSettings = IGSettings()) -> dict:
    """One measurement: the example explained with the settings (its one window), its seconds over its estimated
    multiply-adds, which is the server's seconds per multiply-add."""
    from rcqa.attribution.explanation import explain

    started = time.perf_counter()
    result = explain(qa_model, example, settings)
    seconds = time.perf_counter() - started
    tokens, points = len(result.tokens), [c.steps for c in result.completeness]
    cost = explanation_cost(qa_model, settings, windows=1, tokens=tokens)
    return {"model": qa_model.name, "example": example.id, "tokens": tokens, "seconds": round(seconds, 2),
            "points_per_layer": points, "expected_points_per_layer": cost.points,
            "multiply_adds": cost.multiply_adds, "seconds_per_multiply_add": float(f"{seconds / cost.multiply_adds:.3g}")}


def main() -> None:
    """python -m rcqa.attribution.cost: this machine's seconds per multiply-add (RCQA_SECONDS_PER_MULTIPLY_ADD),
    from the default model explaining the long gallery example's answer window."""
    from rcqa.gallery import gallery_example
    from rcqa.model import load_model

    print(json.dumps(calibrate(load_model(), gallery_example("canal-long")), indent=1))


if __name__ == "__main__":
    main()
