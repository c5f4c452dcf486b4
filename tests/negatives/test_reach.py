"""Which hand-written antonym negatives the training's generator writes: each expectation worked out by hand from the
generator's rules (docs/abstention.md's table of kinds) on the hand-written set's passages; and the round trip, every
negative the generator writes is found again."""
import pytest

from rcqa.data import load_examples
from rcqa.negatives import antonym_negative, negative_kind
from rcqa.negatives.reach import antonym_twins, written_by_antonym_generator
from rcqa.types import Example
from tests.negatives.test_perturbations import MUSEUM, example

HAND_WRITTEN = {e.question: e for e in load_examples("tests/data/hard_unanswerable.json")}


@pytest.mark.parametrize(("question", "twin"), [
    # the passage says it "began service"; a tagger reads "end" here as a noun, the generator reads "begin" as a verb
    ("When did the ferry between Skarra and Lund Island end service?",
     "When did the ferry between Skarra and Lund Island begin service?"),
    ("When did the warbler's numbers rise sharply?", "When did the warbler's numbers fall sharply?"),  # "fell"
    ("What is the smallest piece in the Harlow Museum of Clocks?",
     "What is the largest piece in the Harlow Museum of Clocks?"),
])
def test_an_antonym_the_lexicon_links_to_the_passages_word_is_one_the_generator_writes(question, twin):
    negative = HAND_WRITTEN[question]
    assert [t.question for t in antonym_twins(negative)] == [twin]
    assert written_by_antonym_generator(negative)


@pytest.mark.parametrize(("question", "twins"), [
    ("Why did the Lido at Rowan Bay open in 2002?", []),  # the passage uses "opened" itself: no antonym question
    ("What was the lowest number of people the mine employed?", []),  # "peak": WordNet pairs low with high
    ("When was the Brennock Folk Festival abolished?", []),  # "founded": WordNet pairs abolish with establish
    # the twin exists, but the generator turns no word into an ordinal ("last" → "first"): mutual exclusion does
    ("Who was the first miller at Brackley windmill?", ["Who was the last miller at Brackley windmill?"]),
])
def test_an_antonym_beyond_the_lexicon_or_the_generators_rules_is_not(question, twins):
    negative = HAND_WRITTEN[question]
    assert [t.question for t in antonym_twins(negative)] == twins
    assert not written_by_antonym_generator(negative)


@pytest.mark.parametrize("question", ["When was the museum opened?", "What does the largest room hold?",
                                      "Who won the lens from Oban?", "How far did its visitors rise?"])
def test_every_antonym_negative_the_generator_writes_is_found_again(question):
    negative = antonym_negative(example(question, "1901", MUSEUM))
    assert negative is not None and negative_kind(negative.id) == "antonym" and negative.question != question
    assert written_by_antonym_generator(negative)
    assert question in [t.question for t in antonym_twins(negative)]


def test_a_question_whose_words_the_passage_all_uses_has_no_twin():
    passage = "The museum opened in 1923 and closed in 1998."
    assert antonym_twins(Example("q", passage, "When did the museum open?", is_impossible=True)) == []
