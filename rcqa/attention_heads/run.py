"""Score every head of one question: the window of the model's answer, each head knocked out, and each score."""
from __future__ import annotations

import itertools
from collections.abc import Callable

from rcqa.adapter.discovery import adapter_of
from rcqa.attention_heads.attention_attribution import attention_attribution
from rcqa.attention_heads.cost import part_passes
from rcqa.attention_heads.memory import give_back_freed
from rcqa.attention_heads.relevance import head_relevance
from rcqa.attention_heads.result import HeadScores
from rcqa.attention_heads.scores import HeadCase, gradient_importance, head_case, knock_out_heads, layout_of
from rcqa.model import QAModel
from rcqa.types import Example


def score_heads(qa_model: QAModel, example: Example, fill: str = "zero",
                progress: Callable[[float, str], None] | None = None) -> HeadScores:
    """The heads of the window that holds the model's answer, scored for that answer's span (score_case)."""
    return score_case(qa_model, example, head_case(qa_model, example.passage, example.question), fill, progress)


def score_case(qa_model: QAModel, example: Example, case: HeadCase, fill: str = "zero",
               progress: Callable[[float, str], None] | None = None) -> HeadScores:
    """The heads of the case's window (rcqa.attention_heads.head_case of the example), scored for its span.
    `progress` is told (the share of the work done, where it is) within each score as it goes (attention
    attribution per block, the knock-outs per batch of heads) and after it, the shares weighed by the cost model's
    calibrated passes (rcqa.attention_heads.cost)."""
    layout = layout_of(qa_model, case)
    labels = list(adapter_of(qa_model.model, case.inputs).labels[1:])  # the blocks; the embeddings have no heads
    told = _reporter(progress, layout.layers, layout.heads)
    relevance = head_relevance(qa_model, case)
    told("attnlrp", 1.0, "AttnLRP relevance of every head")
    attributed = attention_attribution(qa_model, case, on_block=lambda done: told(
        "attention_attribution", done / layout.layers, f"attention attribution: block {done} of {layout.layers}"))
    knockout = knock_out_heads(qa_model, case, fill, on_rows=lambda done: told(
        "knockout", done / (layout.layers * layout.heads), f"heads knocked out: {done} of "
        f"{layout.layers * layout.heads} (block {-(-done // layout.heads)} of {layout.layers})"))
    gradient = gradient_importance(qa_model, case)
    told("gradient", 1.0, "gradient importance of every head")
    return HeadScores(example=example, model=qa_model.name, fingerprint=qa_model.fingerprint, answer=case.answer,
                      window=case.window_index, tokens=case.tokens, layers=labels, heads=layout.heads,
                      explained_span=case.span.text, fill=fill, knockout=knockout,
                      scores={"attnlrp": relevance.heads, "attention_attribution": attributed.heads,
                              "gradient": gradient},
                      conservation={"entering": relevance.entering.tolist(), "absorbed": relevance.absorbed.tolist(),
                                    "gap": relevance.conservation_gap.tolist()},
                      completeness={"f_difference": attributed.f_difference.tolist(),
                                    "attribution_sum": attributed.attribution_sum.tolist(),
                                    "gap": attributed.completeness_gap.tolist()})


SCORED_IN_ORDER = ("attnlrp", "attention_attribution", "knockout", "gradient")  # as score_case runs them


def _reporter(progress: Callable[[float, str], None] | None, layers: int,
              heads: int) -> Callable[[str, float, str], None]:
    """told(part, its share done, where): `progress` hears the share of every part's calibrated passes done."""
    passes = part_passes(layers, heads)
    total = sum(passes[part] for part in SCORED_IN_ORDER)
    before = dict(zip(SCORED_IN_ORDER, itertools.accumulate((passes[p] for p in SCORED_IN_ORDER), initial=0.0)))

    def told(part: str, share: float, where: str) -> None:
        give_back_freed()  # between two batches or parts: what the last one freed goes back (memory.py)
        if progress is not None:
            progress(min(1.0, (before[part] + share * passes[part]) / total), where)  # a bar refuses past 1
    return told
