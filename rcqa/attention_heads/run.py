"""Score every head of one question: the window of the model's answer, each head knocked out, and each score."""
from __future__ import annotations

from rcqa.adapter import adapter_of
from rcqa.attention_heads.attention_attribution import attention_attribution
from rcqa.attention_heads.relevance import head_relevance
from rcqa.attention_heads.result import HeadScores
from rcqa.attention_heads.scores import HeadCase, gradient_importance, head_case, knock_out_heads, layout_of
from rcqa.model import QAModel
from rcqa.types import Example


def score_heads(qa_model: QAModel, example: Example, fill: str = "zero") -> HeadScores:
    """The heads of the window that holds the model's answer, scored for that answer's span."""
    return score_case(qa_model, example, head_case(qa_model, example.passage, example.question), fill)


def score_case(qa_model: QAModel, example: Example, case: HeadCase, fill: str = "zero") -> HeadScores:
    """The heads of the case's window (rcqa.attention_heads.head_case of the example), scored for its span."""
    layout = layout_of(qa_model, case)
    labels = list(adapter_of(qa_model.model, case.inputs).labels[1:])  # the blocks; the embeddings have no heads
    relevance, attributed = head_relevance(qa_model, case), attention_attribution(qa_model, case)
    return HeadScores(example=example, model=qa_model.name, fingerprint=qa_model.fingerprint, answer=case.answer,
                      window=case.window_index, tokens=case.tokens, layers=labels, heads=layout.heads,
                      explained_span=case.span.text, fill=fill, knockout=knock_out_heads(qa_model, case, fill),
                      scores={"attnlrp": relevance.heads, "attention_attribution": attributed.heads,
                              "gradient": gradient_importance(qa_model, case)},
                      conservation={"entering": relevance.entering.tolist(), "absorbed": relevance.absorbed.tolist(),
                                    "gap": relevance.conservation_gap.tolist()},
                      completeness={"f_difference": attributed.f_difference.tolist(),
                                    "attribution_sum": attributed.attribution_sum.tolist(),
                                    "gap": attributed.completeness_gap.tolist()})
