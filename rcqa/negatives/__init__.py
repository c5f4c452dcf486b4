"""SQuAD 2.0-style unanswerable questions built from SQuAD v1.1, offline, for training and testing a model that
may abstain (SQuAD 2.0 has about a third of questions without an answer).

Three kinds:
- other-paragraph (rcqa.negatives.paragraphs): the question asked of another paragraph of its own article that
  holds none of its answers, preferring the paragraph that shares the question's rarest words (words weighted by
  their inverse paragraph frequency in the article, so "the" counts for nothing);
- in-context (rcqa.negatives.paragraphs): its own paragraph with every sentence holding a gold answer removed,
  kept only when none of the answers is left in what remains. These are harder: the rest of the context still
  matches the question;
- question perturbations (rcqa.negatives.perturbations): the question changed by a word or two, its passage kept,
  one generator for each of SQuAD 2.0's hard categories (antonym, entity swap, negation, mutual exclusion,
  impossible condition), and two more as people write them (rcqa.negatives.swaps: a role swapped, a count asked
  of a group the passage only describes). The hardest: the passage still holds a plausible answer.

The kind is the suffix of the negative's id (rcqa.negatives.kinds), so that a v2.0 file records it.
"""
from rcqa.negatives.kinds import KINDS, PERTURBATIONS, as_negative, negative_kind
from rcqa.negatives.mix import SQUAD2_SHARE, split_by_article, squad_v2_document, with_negatives
from rcqa.negatives.paragraphs import (MIN_WORDS_LEFT, Article, holds_answer, in_context_negative,
                                       other_paragraph_negative, sentences)
from rcqa.negatives.perturbations import (antonym_negative, entity_swap_negative, impossible_condition_negative,
                                          mutual_exclusion_negative, name_word_swap_negative, negation_negative,
                                          noun_swap_negative, perturbed_negative)
from rcqa.negatives.swaps import role_swap_negative, vague_quantity_negative

__all__ = ["KINDS", "MIN_WORDS_LEFT", "PERTURBATIONS", "SQUAD2_SHARE", "Article", "antonym_negative",
           "as_negative", "entity_swap_negative", "holds_answer", "impossible_condition_negative",
           "in_context_negative", "mutual_exclusion_negative", "name_word_swap_negative", "negation_negative",
           "negative_kind", "noun_swap_negative", "other_paragraph_negative", "perturbed_negative",
           "role_swap_negative", "sentences", "split_by_article", "squad_v2_document", "vague_quantity_negative",
           "with_negatives"]
