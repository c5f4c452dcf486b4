"""The roles readings' inputs by hand: the lighthouse, a question and passage whose scores per layer put a 2-word answer
beside its supporting words (tests/helpers/handmade.py builds the result), and the numbers a reading reads
(rcqa.analysis.roles.shares.RoleNumbers) written per layer: the top-k stacks, the answer's share of the attribution (the
rest on other words) and its ceiling."""
import numpy as np

from rcqa.analysis.roles.shares import RoleNumbers

LIGHTHOUSE_QUESTION = [("Who", "WP"), ("designed", "VBD"), ("the", "DT"), ("lighthouse", "NN"), ("?", ".")]
# word (tag): scores at the embeddings, block 0 and block 1, 100 in all at each layer. "Margaret Ellison" (5, 6) is
# the answer; every other word but "board" lies within 5 words of it (supporting), "lighthouse" and "designed" are
# also the question's (supporting+query), "board" is the only other word.
LIGHTHOUSE = [
    ("The", "DT", [1, 1, 3]), ("lighthouse", "NN", [2, 2, 3]), ("was", "VBD", [12, 10, 20]),
    ("designed", "VBN", [15, 3, 3]), ("by", "IN", [2, 9, 15]), ("Margaret", "NNP", [30, 34, 25]),
    ("Ellison", "NNP", [20, 18, 3]), ("in", "IN", [2, 8, 2]), ("1872", "CD", [2, 5, 10]), ("for", "IN", [1, 4, 2]),
    ("the", "DT", [1, 2, 1]), ("harbour", "NN", [1, 2, 1]), ("board", "NN", [11, 2, 12]), (".", ".", [50, 0, 0]),
]
MARGARET = 5  # "Margaret" among the passage's words


def hand_numbers(top: dict[str, list[float]], answer_attribution: list[float], ceiling: list[float],
                 answer_words: int = 2, passage_words: int = 50, k: int = 5) -> RoleNumbers:
    held = np.array(answer_attribution, dtype=float)
    return RoleNumbers({stack: np.array(values, dtype=float) for stack, values in top.items()},
                       {"answer": held, "other": 100 - held}, np.array(ceiling, dtype=float), answer_words,
                       passage_words, k)
