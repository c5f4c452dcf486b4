"""The kinds of negative, each named by the suffix of its id, so that a v2.0 file records them as it stands."""
from __future__ import annotations

from dataclasses import replace

from rcqa.types import Example

# perturbations of the question, one per SQuAD 2.0 category of hard unanswerable question (Rajpurkar et al. 2018,
# Table 2), its passage unchanged
PERTURBATIONS = {"antonym": "-neg-antonym", "entity_swap": "-neg-entity", "negation": "-neg-not",
                 "mutual_exclusion": "-neg-exclusion", "impossible_condition": "-neg-condition",
                 "role_swap": "-neg-role", "vague_quantity": "-neg-quantity"}
KINDS = {"other_paragraph": "-neg-other", "in_context": "-neg-ctx", **PERTURBATIONS}  # kind → suffix of its id


def negative_kind(example_id: str) -> str | None:
    """The kind of negative an id names, or None for a question of the source data."""
    return next((kind for kind, suffix in KINDS.items() if example_id.endswith(suffix)), None)


def as_negative(example: Example, kind: str, passage: str | None = None, question: str | None = None) -> Example:
    """The example made unanswerable: its kind on its id, the passage or the question replaced, no gold answer."""
    return replace(example, id=example.id + KINDS[kind], passage=example.passage if passage is None else passage,
                   question=example.question if question is None else question, answers=(), is_impossible=True)


def replaced_in_question(example: Example, kind: str, start: int, end: int, text: str) -> Example:
    """The example made a negative of `kind` by writing `text` over the question's characters [start, end)."""
    return as_negative(example, kind, question=example.question[:start] + text + example.question[end:])
