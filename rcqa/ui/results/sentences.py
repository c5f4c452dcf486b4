"""The explained span's sentences as the model itself reads them (rcqa.faithfulness.sentences), on a click and
through the queue."""
from __future__ import annotations

from rcqa.attribution.cost import Price
from rcqa.faithfulness.sentences import SentenceEvidence
from rcqa.faithfulness.sentences.cost import sentence_evidence_seconds
from rcqa.model import QAModel
from rcqa.text import segments
from rcqa.types import Attribution
from rcqa.ui import worker
from rcqa.ui.results.per_layer import result_window_tokens
from rcqa.ui.results.requested import ask_button, queued

ABLATIONS = 32  # ContextCite's random ablations on the Explore page, a quarter held out for the surrogate's R²


def sentence_evidence(qa_model: QAModel, result: Attribution, key: str) -> SentenceEvidence | None:
    """Leaving each sentence out and the surrogate, for the span the result explains, once asked for."""
    request = ("sentence_evidence", key)
    sentences = len(segments(result.example.passage).sentences)
    readings = 1 + sentences + ABLATIONS
    if not ask_button(request, "Check the sentences against the model",
                      f"Reads the answer again with each of the passage's {sentences} sentences deleted, then with "
                      f"{ABLATIONS} random halves of them deleted, to which ContextCite's surrogate is fitted: "
                      f"{readings} readings of the passage."):
        return None
    price = Price(sentence_evidence_seconds(qa_model, sentences, result.answer.n_windows,
                                            result_window_tokens(qa_model, result), ABLATIONS))
    return queued(request, qa_model, worker.sentence_evidence, result.example, result.explained_span(), ABLATIONS,
                  label="Reading the answer with sentences deleted…", estimate=price, first_step="reading the passage")
