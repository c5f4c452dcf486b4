"""A faithfulness comparison built by hand: ten passage words, a method, a method ranking the other way round, and
two random draws, each re-answer's probability and answer chosen so that every number can be worked out on paper
(see tests/faithfulness/test_faithfulness.py)."""
import numpy as np

from rcqa.faithfulness.compare import Comparison, Deletions, MethodResult, Protocol
from rcqa.faithfulness.deletion import Reanswer
from rcqa.types import Answer, Example, ExplainedTarget, Word

TEXTS = ["w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "5<6"]
PASSAGE = " ".join(TEXTS)
WORDS = [Word(text, PASSAGE.index(text), PASSAGE.index(text) + len(text), "passage", (i + 4,), "NN")
         for i, text in enumerate(TEXTS)]
PROTOCOL = Protocol(k=3, fractions=(0.2,), bins=(0.1, 0.5), draws=2)  # k 0..3; 20 % = 2 words; bins 1 and 5 words


def said(probability: float, word: int | tuple[int, int]) -> Reanswer:
    """A re-answer with this probability whose answer runs over these words (one, or first and last)."""
    first, last = (word, word) if isinstance(word, int) else word
    start, end = WORDS[first].start_char, WORDS[last].end_char
    return Reanswer(probability, (start, end), PASSAGE[start:end])


ORIGINAL = said(0.8, 3)
GRADIENT_RANKING = [3, 4, 0, 1, 2, 5, 6, 7, 8, 9]  # the explained span's word w3 first


def deletions(ranking, without_top: dict, only_top: dict) -> Deletions:
    return Deletions(tuple(ranking), {0: ORIGINAL, **without_top}, only_top)


def handmade_comparison() -> Comparison:
    method = deletions(GRADIENT_RANKING, {1: said(0.5, 4), 2: said(0.3, 5), 3: said(0.2, 5),
                                                        5: said(0.1, 6)}, {1: said(0.6, 3), 5: said(0.7, 3)})
    reverse = deletions(GRADIENT_RANKING[::-1], {c: said(0.8, 3) for c in (1, 2, 3, 5)},
                        {1: said(0.1, 3), 5: said(0.2, 3)})
    first_draw = deletions([9, 8, 7, 6, 5, 4, 3, 2, 1, 0], {1: said(0.8, 3), 2: said(0.7, 3), 3: said(0.6, (3, 4)),
                                                            5: said(0.5, 3)}, {1: said(0.2, 3), 5: said(0.4, 3)})
    second_draw = deletions([0, 2, 4, 6, 8, 1, 3, 5, 7, 9], {1: said(0.6, 3), 2: said(0.5, 3), 3: said(0.4, 3),
                                                             5: said(0.3, 3)}, {1: said(0.1, 3), 5: said(0.3, 3)})
    gradient_scores = np.zeros(10)
    gradient_scores[GRADIENT_RANKING] = np.arange(10.0)[::-1]  # 9 for the top word … 0 for the last

    def result(name, draws, scores):
        return MethodResult(name, f"{name} by hand", [np.zeros(15)] * len(draws), scores, draws)

    return Comparison(
        example=Example(id="toy", passage=PASSAGE, question="q ?"), model="handmade", fingerprint="0",
        answer=Answer(question="q ?", nbest=(), n_windows=1), window=0,
        tokens=["[CLS]", "q", "?", "[SEP]", *TEXTS, "[SEP]"], token_segments=["special"] + ["question"] * 2 +
        ["special"] + ["passage"] * 10 + ["special"], words=WORDS, deletable=list(range(10)),
        target=ExplainedTarget("span_log_prob", "log p(start) + log p(end) of the span", 7, 7, "w3", 0),
        span_chars=(WORDS[3].start_char, WORDS[3].end_char),
        protocol=PROTOCOL, original=ORIGINAL,
        methods={"gradient": result("gradient", [method], [gradient_scores]),
                 "attention_tracing": result("attention_tracing", [reverse], [9 - gradient_scores]),
                 "random": result("random", [first_draw, second_draw], [np.arange(10.0), np.arange(10.0)])})
