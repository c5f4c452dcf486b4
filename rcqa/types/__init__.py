"""The data types that flow through the library: examples in, answers and results out.

answers: Example, its gold answers, the candidate Spans, "no answer", the Answer and the Words · settings:
ExplainSettings (what changes an explanation's numbers) and Windowing · targets: what a result explains, ExplainedTarget
and its Foil · header: ResultHeader, what every result says it is of, with save, load and show · attribution: the
explanation itself, and the Aggregation (token score) its scores are read under · storage: JSON and .npz files,
and load_result, which reads any result back by its kind · document: Document, a typed JSON document's save and load.
"""
from rcqa.types.answers import Answer, AnswerSettings, Example, GoldAnswer, NoAnswer, Span, Word, overlaps
from rcqa.types.attribution import (
    AGGREGATIONS,
    COMPACT_AGGREGATIONS,
    DEFAULT_AGGREGATION,
    VIEWS,
    Aggregation,
    Attribution,
    Completeness,
    compact_scores,
    full_scores,
)
from rcqa.types.header import ResultHeader
from rcqa.types.settings import ExplainSettings, Windowing
from rcqa.types.storage import load_result
from rcqa.types.targets import NULL_TARGETS, ExplainedTarget, Foil, explained_target

__all__ = ["AGGREGATIONS", "COMPACT_AGGREGATIONS", "DEFAULT_AGGREGATION", "NULL_TARGETS", "VIEWS", "Aggregation", "Answer", "AnswerSettings", "Attribution",
           "Completeness", "Example", "ExplainedTarget", "Foil", "GoldAnswer", "ExplainSettings", "NoAnswer", "ResultHeader",
           "Span", "Windowing", "Word", "compact_scores", "explained_target", "full_scores", "load_result", "overlaps"]
