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

Every explanation first answers the question (rcqa.qa: one forward through every block of every window of the
passage, 12 h² multiply-adds per token and block), so a long paste's explanation of one window also pays for
reading the whole passage.

A method's work is counted in path points a layer (rcqa.attribution.layerwise.LayerwiseMethod.path_points): layer-wise
IG's expected points (rcqa.attribution.layerwise.integrated_gradients), or what a method that runs otherwise costs in
them (AttnLRP's one pass).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from rcqa.attribution.layerwise import method_of
# IG's path rules, named here as they always were (the tests', the comparisons' and the sanity checks' prices)
from rcqa.attribution.layerwise.integrated_gradients import ADAPTIVE_GROWTH, ADAPTIVE_POINTS  # noqa: F401
from rcqa.attribution.layerwise.integrated_gradients import expected_points, worst_case  # noqa: F401
from rcqa.attribution.memory import attention_heads, point_bytes
from rcqa.types.settings import ExplainSettings
# this server's speed is the cost model's too, and named here as it always was (RCQA_SECONDS_PER_MULTIPLY_ADD)
from rcqa.attribution.speed import SECONDS_PER_MULTIPLY_ADD, SPEED_ENV  # noqa: F401
from rcqa.attribution.speed import MULTIPLY_ADDS_PER_TOKEN_BLOCK, pass_seconds, server_speed
from rcqa.model import QAModel

FORWARD = 1 / 3  # of a pass through a block: the forward alone


@dataclass(frozen=True)
class Cost:
    """The parts of an explanation's work (module docstring)."""

    windows: int
    tokens: int  # per window
    blocks: int  # L
    points: float  # expected per layer
    targets: int
    width: int  # h
    read_windows: int = 0  # the passage's windows, each read forward once to answer the question

    @property
    def block_passes(self) -> int:
        """Block passes per path point over every layer: L − l at the output of layer l = 0 … L."""
        return self.blocks * (self.blocks + 1) // 2

    @property
    def multiply_adds(self) -> float:
        explained = self.windows * self.block_passes * self.points * self.targets
        read = self.read_windows * self.blocks * FORWARD
        return (explained + read) * self.tokens * MULTIPLY_ADDS_PER_TOKEN_BLOCK * self.width ** 2

    def seconds(self, seconds_per_multiply_add: float | None = None) -> float:
        """The expected seconds, at seconds_per_multiply_add (this server's, server_speed(), by default)."""
        return self.multiply_adds * (server_speed() if seconds_per_multiply_add is None else seconds_per_multiply_add)


@dataclass(frozen=True)
class Price:
    """What a job costs on this server: the seconds it is expected to take, and at most (worst: the adaptive rule
    refined up to max_steps at every layer; None: as expected), and, for a job that runs path points, the memory one
    of them holds (point_memory_mb), which no batch can go below. Every job the dashboard queues has one."""

    seconds: float
    worst: float | None = None
    point_mb: float | None = None  # what one path point holds for its backward (its smallest batch); None: no path


    @property
    def most(self) -> float:
        return self.seconds if self.worst is None else self.worst

    def in_words(self) -> str:
        """"about 10 seconds", or, where the worst case reads otherwise, "about 10 seconds, about 2 minutes at
        worst"."""
        expected, most = in_words(self.seconds), in_words(self.most)
        return expected if most == expected else f"{expected}, {most} at worst"


def model_width(qa_model: QAModel) -> int:
    """The model's hidden size, as its config names it (BERT's hidden_size, DistilBERT's dim)."""
    config = qa_model.config
    return int(getattr(config, "hidden_size", None) or getattr(config, "dim"))


def explanation_cost(qa_model: QAModel, settings: ExplainSettings, windows: int, tokens: int,
                     passage_windows: int | None = None) -> Cost:
    """The cost of explaining `windows` windows of `tokens` tokens each (the whole passage's, or the one window's)
    with these settings, after answering the question over the passage's `passage_windows` (default: `windows`).
    Every explained window counts as read: the default target's softmax reads them all (the logit targets read one
    or two, so for them this is an upper bound). The points a layer are the method's
    (rcqa.attribution.layerwise.LayerwiseMethod.path_points)."""
    targets = len(settings.targets) + bool(settings.contrast)
    blocks = qa_model.num_layers
    points = method_of(settings).path_points(settings, blocks)
    return Cost(windows=windows, tokens=tokens, blocks=blocks, points=points, targets=targets,
                width=model_width(qa_model), read_windows=windows if passage_windows is None else passage_windows)


def explanation_price(qa_model: QAModel, settings: ExplainSettings, windows: int, tokens: int,
                      passage_windows: int | None = None) -> Price:
    """The explanation's price (explanation_cost's seconds), at worst (priced on the method's worst case: IG's
    adaptive rule refined to max_steps), and its path point's memory."""
    def seconds(chosen: ExplainSettings) -> float:
        return explanation_cost(qa_model, chosen, windows, tokens, passage_windows).seconds()

    return Price(seconds(settings), seconds(method_of(settings).worst_case(settings)), point_memory_mb(qa_model, tokens))


def point_memory_mb(qa_model: QAModel, tokens: int) -> float:
    """The MB one path point of a window of `tokens` tokens holds at the embeddings' layer, where it runs through
    every block (rcqa.attribution.memory.point_bytes): the least a chunk of the explanation holds. AttnLRP's one
    pass holds as much."""
    one_point = point_bytes(tokens, model_width(qa_model), attention_heads(qa_model.config), qa_model.num_layers)
    return one_point / 2**20


def block_seconds(qa_model: QAModel, block_passes: float, tokens: int) -> float:
    """`block_passes` passes (forward and backward) through one block of the model over `tokens` tokens, on this
    server; a forward alone is FORWARD of a pass."""
    return pass_seconds(block_passes, tokens, model_width(qa_model))


def reading_seconds(qa_model: QAModel, windows: int, tokens: int) -> float:
    """Answering over `windows` windows of `tokens` tokens: a forward through every block of each."""
    return block_seconds(qa_model, windows * qa_model.num_layers * FORWARD, tokens)


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


def calibrate(qa_model: QAModel, example, settings: ExplainSettings = ExplainSettings()) -> dict:
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
