"""Which sentence the answer rests on, by the model itself: leaving each sentence out and ContextCite's surrogate
(ablation), one explanation's sentence scores against them (agreement), and both over many questions with paired
intervals (over_questions; `python -m rcqa sentence-check`)."""
from rcqa.faithfulness.sentences.ablation import (SentenceAblation, SentenceEvidence, Surrogate, context_cite,
                                                  leave_one_sentence_out, sentence_evidence)
from rcqa.faithfulness.sentences.agreement import SentenceCheck, sentence_check

__all__ = ["SentenceAblation", "SentenceCheck", "SentenceEvidence", "Surrogate", "context_cite",
           "leave_one_sentence_out", "sentence_check", "sentence_evidence"]
