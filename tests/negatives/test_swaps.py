"""The role swap and the vague-quantity swap (rcqa.negatives.swaps) on hand-made passages, each expected question
written out by hand."""
import random

import pytest

from rcqa.negatives import negative_kind, perturbed_negative, role_swap_negative, vague_quantity_negative
from rcqa.negatives.antonyms import inflected, lemma
from rcqa.negatives.swaps import ROLE_VERBS
from rcqa.types import Example, GoldAnswer

HARBOUR = ("The harbour light at Corran was designed by the engineer Margaret Ellison and built by the Halden firm "
           "of Avery & Sons in 1872. Most residents of Corran work in the canneries, and several pickers come each "
           "autumn; 9 boatmen row the pilots out, and two of the ferrymen sail at night.")


def example(question: str, answer: str, passage: str = HARBOUR) -> Example:
    return Example(id="q", passage=passage, question=question, title="Corran",
                   answers=(GoldAnswer(answer, passage.index(answer)),))


class FirstChoice(random.Random):
    """A draw that always takes the first candidate, so that the expected question can be written by hand."""

    def choice(self, seq):
        return seq[0]


@pytest.mark.parametrize(("question", "answer", "expected"), [
    # the first role verb the passage states, swapped for the first (sorted) role verb it never uses, inflected
    ("Who designed the harbour light?", "Margaret Ellison", "Who bought the harbour light?"),
    ("When was the harbour light built?", "1872", "When was the harbour light bought?"),
    ("Which firm built the light?", "Avery & Sons", "Which firm bought the light?"),
    ("Who painted the harbour light?", "Margaret Ellison", None),  # the passage never states "painted"
    ("What did Ellison design?", "The harbour light", None),  # a what-question: no role asked
])
def test_a_role_swap_replaces_a_role_verb_the_passage_states_by_one_it_never_uses(question, answer, expected):
    negative = role_swap_negative(example(question, answer), FirstChoice())
    assert (negative and negative.question) == expected
    if negative:
        assert negative_kind(negative.id) == "role_swap" and negative.is_impossible and not negative.answers


def test_a_role_swap_never_uses_a_verb_the_passage_states_in_any_form():
    passage = HARBOUR + " It was bought, commissioned, coached, compose and demolished later."
    negative = role_swap_negative(example("Who designed the harbour light?", "Margaret Ellison", passage),
                                  FirstChoice())
    # buy, commission, coach, compose, demolish are stated in some form: the next sorted one is "direct"
    assert negative.question == "Who directed the harbour light?"
    swapped = {role_swap_negative(example("Who designed the harbour light?", "Margaret Ellison", passage),
                                  random.Random(seed)).question.split()[1] for seed in range(40)}
    assert not swapped & {"bought", "commissioned", "coached", "composed", "demolished", "designed", "built"}
    # each a role verb in the past participle the question's "designed" was (VBN)
    assert len(swapped) > 5 and {lemma(word, "VBN") for word in swapped} <= ROLE_VERBS
    assert all(inflected(lemma(word, "VBN"), "VBN") == word for word in swapped)


@pytest.mark.parametrize(("question", "expected"), [
    # the counted phrase asked instead of a group the passage describes vaguely ("most residents", "several
    # pickers") and never counts; the boatmen (9) and the ferrymen (two of them) are counted; first sorted: pickers
    ("How many boatmen row the pilots out?", "How many pickers row the pilots out?"),
    ("How many local boatmen row the pilots out?", "How many pickers row the pilots out?"),
    ("How many years did Ellison work on it?", None),  # a measure, not a group
    ("How many kinds of boat sail at night?", None),  # "kinds of": the phrase counts what follows "of"
    ("What do the boatmen row out?", None),  # counts nothing
])
def test_a_vague_quantity_swap_asks_the_count_of_a_group_the_passage_never_counts(question, expected):
    negative = vague_quantity_negative(example(question, "9" if "boatmen" in question else "pilots"), FirstChoice())
    assert (negative and negative.question) == expected


def test_a_group_the_passage_counts_or_the_same_people_is_never_asked():
    passage = "Most residents of Corran work in the canneries; 40 pickers come each autumn, and many of the pickers stay."
    # the pickers are counted (40), the residents are people asked of people: nothing is left to ask
    assert vague_quantity_negative(example("How many people live in Corran?", "Corran", passage), FirstChoice()) \
        is None
    negative = vague_quantity_negative(example("How many boats are in the harbour?", "Corran", passage),
                                       FirstChoice())
    assert negative.question == "How many residents are in the harbour?"


def test_the_new_kinds_are_tried_by_perturbed_negative():
    question = example("Who designed the harbour light?", "Margaret Ellison")
    built = perturbed_negative(question, ["role_swap"], FirstChoice(), list, list)
    assert negative_kind(built.id) == "role_swap"
    counted = example("How many boatmen row the pilots out?", "9")
    assert negative_kind(perturbed_negative(counted, ["vague_quantity"], FirstChoice(), list, list).id) \
        == "vague_quantity"
