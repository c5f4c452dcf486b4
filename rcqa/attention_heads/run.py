"""Score every head of one question: the window of the model's answer, each registered score, and each head knocked
out."""
from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

from rcqa.adapter.discovery import adapter_of
from rcqa.attention_heads.cost import KNOCKOUT, part_passes
from rcqa.attention_heads.memory import give_back_freed
from rcqa.attention_heads.registry import HEAD_SCORES, SharedCase
from rcqa.attention_heads.result import HeadScores
from rcqa.attention_heads.scores import HeadCase, head_case, knock_out_heads, layout_of
from rcqa.model import QAModel
from rcqa.types import Example


def score_heads(qa_model: QAModel, example: Example, fill: str = "zero",
                progress: Callable[[float, str], None] | None = None) -> HeadScores:
    """The heads of the window that holds the model's answer, scored for that answer's span (score_case)."""
    return score_case(qa_model, example, head_case(qa_model, example.passage, example.question), fill, progress)


def score_case(qa_model: QAModel, example: Example, case: HeadCase, fill: str = "zero",
               progress: Callable[[float, str], None] | None = None) -> HeadScores:
    """The heads of the case's window (rcqa.attention_heads.head_case of the example), scored for its span by each
    registered score in turn, then knocked out. `progress` is told (the share of the work done, where it is) within
    each part as it goes (attention attribution per block, the knock-outs per batch of heads) and after it, the
    shares weighed by the cost model's calibrated passes (rcqa.attention_heads.cost)."""
    layout = layout_of(qa_model, case)
    labels = list(adapter_of(qa_model.model, case.inputs).labels[1:])  # the blocks; the embeddings have no heads
    told = _reporter(progress, layout.layers, layout.heads)
    shared = SharedCase(qa_model, case)
    scores, checks = {}, {}
    for score in HEAD_SCORES.values():
        found = score.score(shared, functools.partial(told, score.pass_name))
        scores[score.name] = found.heads
        checks.update(found.checks)
    knockout = knock_out_heads(qa_model, case, fill, on_rows=lambda done: told(
        KNOCKOUT, done / (layout.layers * layout.heads), f"heads knocked out: {done} of "
        f"{layout.layers * layout.heads} (block {-(-done // layout.heads)} of {layout.layers})"))
    return HeadScores(example=example, model=qa_model.name, fingerprint=qa_model.fingerprint, answer=case.answer,
                      window=case.window_index, tokens=case.tokens, layers=labels, heads=layout.heads,
                      explained_span=case.span.text, fill=fill, knockout=knockout, scores=scores,
                      conservation=checks["conservation"], completeness=checks["completeness"])


def first_step() -> str:
    """The progress bar's text before its first report: the first registered score's."""
    return next(iter(HEAD_SCORES.values())).step


def _reporter(progress: Callable[[float, str], None] | None, layers: int,
              heads: int) -> Callable[[str, float, str], None]:
    """told(part, its share done, where): `progress` hears the share of every part's calibrated passes done, the
    parts in the order score_case runs them (the patterns, read after, aside)."""
    passes = part_passes(layers, heads)
    order = [*dict.fromkeys(score.pass_name for score in HEAD_SCORES.values()), KNOCKOUT]
    total = sum(passes[part] for part in order)
    before = dict(zip(order, itertools.accumulate((passes[p] for p in order), initial=0.0)))

    def told(part: str, share: float, where: str) -> None:
        give_back_freed()  # between two batches or parts: what the last one freed goes back (memory.py)
        if progress is not None:
            progress(min(1.0, (before[part] + share * passes[part]) / total), where)  # a bar refuses past 1
    return told
