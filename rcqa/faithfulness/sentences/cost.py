"""What checking an answer's sentences against the model costs, for the queue's price (rcqa.attribution.cost)."""
from __future__ import annotations

from rcqa.attribution.cost import reading_seconds
from rcqa.model import QAModel


def sentence_evidence_seconds(qa_model: QAModel, sentences: int, windows: int, tokens: int, ablations: int) -> float:
    """rcqa.faithfulness.sentences.sentence_evidence: the passage read whole, with each of its `sentences` left out,
    and with each of `ablations` random halves deleted; a reading of a shortened passage costs at most the whole
    one's (`windows` windows of `tokens` tokens)."""
    return (1 + sentences + ablations) * reading_seconds(qa_model, windows, tokens)
