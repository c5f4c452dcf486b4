"""Per layer, the share of its top-k words (or of its attribution) in each category: the categories a word may count
in twice, the roles chart's stacks in which each word counts once (RoleNumbers), and the quantifier questions'
numbers."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rcqa.analysis.roles.categories import category_masks, explained_span_mask, word_categories
from rcqa.analysis.words import is_empty, top_k
from rcqa.text import NUMBER_TAG, is_quantifier_question
from rcqa.types import Attribution, Word


def shares_of_top(top: list[np.ndarray], mask: np.ndarray) -> np.ndarray:
    """Per layer, the % of its top words that the mask marks; NaN for a layer with no top words."""
    return np.array([100 * mask[row].sum() / len(row) if len(row) else np.nan for row in top])


def category_shares(result: Attribution, distribution: np.ndarray, k: int = 5, target: int = 0) -> dict[str, np.ndarray]:
    """Per layer, the % of its top-k passage words in each category (a word may count in two)."""
    top = top_k(distribution, k)
    return {name: shares_of_top(top, mask) for name, mask in category_masks(result, target).items()}


def quantifier_share(result: Attribution, distribution: np.ndarray, k: int = 5, target: int = 0) -> np.ndarray | None:
    """Per layer, (numbers among the top-k, less one if one is in the explained span) / numbers in the passage,
    in %; NaN for a layer with no top words. Numbers are the words tagged CD. None unless the question is a
    quantifier question over a passage with at least two numbers."""
    numbers = np.array([w.tag == NUMBER_TAG for w in result.passage_words()], dtype=bool)
    if not is_quantifier_question(result.example.question) or numbers.sum() < 2:
        return None
    in_span = numbers & explained_span_mask(result, target)
    counts = [numbers[row].sum() - in_span[row].any() if len(row) else np.nan for row in top_k(distribution, k)]
    return 100 * np.array(counts, dtype=float) / numbers.sum()


def other_number_share(result: Attribution, distribution: np.ndarray, k: int = 5, target: int = 0) -> np.ndarray | None:
    """Per layer, the % of its top-k passage words that are numbers (tagged CD) outside both the explained span and
    the contrast's foil: the paper's "other numbers" with the two numbers the contrast itself names taken out, so
    that their share cannot come from the target by construction. None unless the target is a contrast whose foil
    is a span."""
    masks = category_masks(result, target)
    if "foil" not in masks:
        return None
    numbers = np.array([w.tag == NUMBER_TAG for w in result.passage_words()], dtype=bool)
    return shares_of_top(top_k(distribution, k), numbers & ~explained_span_mask(result, target) & ~masks["foil"])


SPAN_PAIR = ("foil", "shared")  # a contrast's categories, named only for one (shared: one whose foil overlaps the span)
# the roles chart's stacks, each word in one: a word in two roles is in the stack that names both ("supporting+query")
ROLE_STACKS = ("answer", "answer+query", "supporting", "supporting+query", "query", *SPAN_PAIR, "other")


def exclusive_labels(result: Attribution, target: int = 0) -> list[str]:
    """One label per passage word, each word counted once: 'foil' or 'shared' whatever else it is, else 'answer',
    'answer+query', 'supporting', 'supporting+query', 'query' or 'other'. These are the roles chart's stacks."""
    return [next((name for name in SPAN_PAIR if name in labels.split("+")), labels or "other")
            for labels in word_categories(result, target)]


def kind_of(stack: str) -> str:
    """The kind of word a roles chart's stack holds: a two-role stack ("supporting+query") belongs to its first
    role, beside whose own stack the chart draws it, so a supporting word is counted as one whether or not the
    question shares it."""
    return stack.partition("+")[0]


def kind_share(shares: dict[str, np.ndarray], kind: str) -> np.ndarray:
    """Per layer, the sum of the stacks of one kind (the answer: 'answer' and 'answer+query')."""
    return sum((values for stack, values in shares.items() if kind_of(stack) == kind),
               np.zeros(len(next(iter(shares.values())))))


def _stacks(kinds: np.ndarray) -> list[str]:
    """ROLE_STACKS, a contrast's only where some passage word is in them."""
    return [role for role in ROLE_STACKS if role not in SPAN_PAIR or (kinds == role).any()]


def reading_shares(labels: list[str], top: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Per layer, the % of its top words in each of ROLE_STACKS, from the exclusive labels: the numbers the roles
    chart stacks (a query word in the answer counts as 'answer+query', in neither 'answer' nor 'query'), so they add
    up to 100 %. A contrast's stacks are there only where some passage word is in them."""
    kinds = np.array(labels)
    return {role: shares_of_top(top, kinds == role) for role in _stacks(kinds)}


def attribution_shares(labels: list[str], distribution: np.ndarray) -> dict[str, np.ndarray]:
    """Per layer, the % of its attribution over the passage's words that falls on each stack's words: the heatmap's
    shares (passage words only) summed by stack, so they add up to 100 %; NaN for a layer with no attribution."""
    kinds = np.array(labels)
    empty = is_empty(distribution)
    return {role: np.where(empty, np.nan, 100 * distribution[:, kinds == role].sum(axis=1))
            for role in _stacks(kinds)}


def answer_ceiling(answer_words: int, top: list[np.ndarray]) -> np.ndarray:
    """Per layer, the largest % of its top words the answer's words can be: their count over the layer's top words,
    at most 100 %; NaN for a layer with no top words. A 2-word answer fills at most 40 % of a top-5."""
    return np.array([min(100.0, 100 * answer_words / len(row)) if len(row) else np.nan for row in top])


@dataclass(frozen=True)
class RoleNumbers:
    """Per layer, what the roles chart draws and its reading reads: the % of the top-k words in each stack (`top`),
    the % of the layer's passage attribution on each stack's words (`attribution`), and the answer's ceiling in the
    top-k; with the answer's and the passage's word counts and k."""

    top: dict[str, np.ndarray]
    attribution: dict[str, np.ndarray]
    ceiling: np.ndarray
    answer_words: int
    passage_words: int
    k: int


def role_numbers(result: Attribution, distribution: np.ndarray, k: int = 5, target: int = 0) -> RoleNumbers:
    """The roles of one target's top-k words and attribution, per layer (see RoleNumbers)."""
    labels = exclusive_labels(result, target)
    top = top_k(distribution, k)
    answer_words = sum(kind_of(label) == "answer" for label in labels)
    return RoleNumbers(reading_shares(labels, top), attribution_shares(labels, distribution),
                       answer_ceiling(answer_words, top), answer_words, len(labels), k)


def top_words(result: Attribution, distribution: np.ndarray, k: int = 5) -> list[list[Word]]:
    passage = result.passage_words()
    return [[passage[i] for i in row] for row in top_k(distribution, k)]
