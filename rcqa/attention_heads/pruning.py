"""The pruning curve (Michel et al., NeurIPS 2019, their Figure 3): F1 on a set of questions as more and more heads
are removed, the least important first by each score's importance over a dataset, against a random order.

A head is removed by the knock-out's gate (rcqa.attention_heads.gates, the zero fill) in every window of every
question, the answer read as the model reads it (rcqa.qa.answer), F1 by the official SQuAD rules
(rcqa.evaluate). Importance over a dataset is each score's mean over the questions, oriented by its registered
class (HeadScore.importance: a signed score, a magnitude and the knock-out's drop are read as they are, so that a
head whose removal raised F on average is least important; a predicted change in F is a predicted drop negated).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from rcqa.attention_heads.gates import HeadLayout, gated_model
from rcqa.attention_heads.registry import HEAD_SCORES
from rcqa.evaluate import evaluate
from rcqa.model import QAModel
from rcqa.qa import answer
from rcqa.types import Example

RANDOM = "random"


def removal_order(importance: np.ndarray) -> list[tuple[int, int]]:
    """(layer, head) pairs, least important first (a tie keeps the grid's order)."""
    flat = np.argsort(importance.ravel(), kind="stable")
    return [divmod(int(index), importance.shape[1]) for index in flat]


def random_order(layers: int, heads: int, seed: int) -> list[tuple[int, int]]:
    flat = np.random.default_rng(seed).permutation(layers * heads)
    return [divmod(int(index), heads) for index in flat]


def pruned_gates(layout: HeadLayout, removed: list[tuple[int, int]]) -> torch.Tensor:
    """Gates (1 × layers × heads) with the removed heads at 0."""
    gates = torch.ones(1, layout.layers, layout.heads)
    for layer, head in removed:
        gates[0, layer, head] = 0
    return gates


def f1_with_heads_removed(qa_model: QAModel, layout: HeadLayout, examples: list[Example],
                          removed: list[tuple[int, int]]) -> float:
    """SQuAD v1.1 F1 (rcqa.evaluate, 0–100, over the answerable examples) of the model's answers, forced to spans,
    with the removed heads knocked out in every window."""
    pruned = replace(qa_model, model=gated_model(qa_model.model, layout, pruned_gates(layout, removed)))

    def predict(example: Example) -> str:
        found = answer(pruned, example.passage, example.question, n_best=1, allow_null=False)
        return found.best.text if found.best else ""

    with torch.no_grad():
        return evaluate(examples, predict)["f1"]


def random_name(seed: int, first: int) -> str:
    """A random order's name in the curve: RANDOM for the first seed (as curves of one random order call it),
    "random:SEED" for the others."""
    return RANDOM if seed == first else f"{RANDOM}:{seed}"


def pruning_curve(qa_model: QAModel, layout: HeadLayout, examples: list[Example],
                  importance: dict[str, np.ndarray], counts: list[int], seed: int = 0,
                  random_orders: int = 1) -> dict[str, list[float]]:
    """{order: F1 with the first `count` heads of that order removed, for each count}, the orders being each
    importance's (least important first, as its score reads it) and `random_orders` random ones, seeded seed,
    seed + 1, … (one draw of a random order says little of the others)."""
    orders = {name: removal_order(HEAD_SCORES[name].importance(values) if name in HEAD_SCORES else values)
              for name, values in importance.items()}  # the knock-out's drop is no score: read as it is
    for drawn in range(seed, seed + random_orders):
        orders[random_name(drawn, seed)] = random_order(layout.layers, layout.heads, drawn)
    measured: dict[frozenset[tuple[int, int]], float] = {}  # every order starts with none removed and ends with all

    def f1(removed: list[tuple[int, int]]) -> float:
        if (key := frozenset(removed)) not in measured:
            measured[key] = f1_with_heads_removed(qa_model, layout, examples, removed)
        return measured[key]

    return {name: [f1(order[:count]) for count in counts] for name, order in orders.items()}


def heads_spared(curve: list[float], counts: list[int], points: float = 1.0) -> int:
    """The most heads removed (a count of the curve) with F1 still within `points` of the unpruned (counts[0] = 0)."""
    kept = [count for count, f1 in zip(counts, curve) if f1 >= curve[0] - points]
    return max(kept)
