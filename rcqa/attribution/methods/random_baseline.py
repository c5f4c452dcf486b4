"""The random baseline: scores that say nothing, drawn with a seed."""
from __future__ import annotations

import numpy as np

from rcqa.attribution.methods.base import AttributionMethod, Case
from rcqa.types.settings import ExplainSettings


class RandomBaseline(AttributionMethod):
    name = "random"
    colour = "#7f7f7f"
    label = "Random"
    description = "random: one uniform draw per word, shared by its word-pieces (seeded)"
    rankings = ("random",)
    ranking_before_both = "random"
    compared = False  # what the others are compared with
    passes = 0.0

    def __init__(self, seed: int = 0):
        self.seed = seed

    def made(self, settings: ExplainSettings, seed: int) -> RandomBaseline:
        return RandomBaseline(seed)

    def attribute(self, case: Case) -> dict[str, np.ndarray]:
        # a word's pieces split its draw, so that its summed score is the draw itself: ranking words by their
        # scores is then a uniformly random order, whatever the words' lengths in pieces
        scores = np.zeros(case.length)
        for word, draw in zip(case.words, np.random.default_rng(self.seed).random(len(case.words))):
            scores[list(word.tokens)] = draw / len(word.tokens)
        return {"random": scores}
