"""Question perturbations (SQuAD 2.0's hard unanswerable kinds) on hand-made passages, each expected question written
out by hand; and their share among the negatives with_negatives builds."""
import random

import pytest

from rcqa.negatives import (KINDS, PERTURBATIONS, antonym_negative, entity_swap_negative,
                            impossible_condition_negative, mutual_exclusion_negative, name_word_swap_negative,
                            negation_negative,
                            negative_kind, noun_swap_negative, perturbed_negative, with_negatives)
from rcqa.negatives.antonyms import lemma
from rcqa.negatives.perturbations import cased_like, occurs
from rcqa.negatives.swaps import ROLE_VERBS
from rcqa.text import NamedEntity, WrittenWord
from rcqa.types import Example, GoldAnswer

LIGHT = ("The lighthouse on Corran Point was first lit in 1872 by the keeper John Avery. It was designed by the "
         "engineer Margaret Ellison. Ships from Halden passed it every night until 1986.")


def example(question, answer, passage=LIGHT, id="q"):
    return Example(id=id, passage=passage, question=question, title="Corran",
                   answers=(GoldAnswer(answer, passage.index(answer)),))


def perturbed(negative):
    """(kind, question) of a negative, after checking that it is one: unanswerable, no gold answer."""
    assert negative.is_impossible and negative.answers == ()
    return negative_kind(negative.id), negative.question


def test_an_antonym_replaces_the_first_word_the_passage_states_whose_antonym_it_never_uses():
    first = example("Who was the first keeper of the light?", "John Avery")
    negative = antonym_negative(first)
    assert perturbed(negative) == ("antonym", "Who was the last keeper of the light?")
    assert negative.id == "q-neg-antonym" and negative.passage == LIGHT and not negative.answers
    # "Before" (a preposition: the hand-listed antonyms) is not in the passage, so "first" is the one replaced
    passage = LIGHT + " After that it was painted."
    assert antonym_negative(example("Before 1900, who was the first keeper?", "John Avery", passage)).question == \
        "Before 1900, who was the last keeper?"
    # a capital stays a capital; a word merely holding the antonym ("blast") does not block it
    assert antonym_negative(example("First keeper of the light: who was he?", "John Avery",
                                    LIGHT + " A blast.")).question == "Last keeper of the light: who was he?"
    assert antonym_negative(example("Who kept it?", "John Avery")) is None
    assert antonym_negative(example("Who was the first keeper?", "John Avery", LIGHT + " The last one left.")) is None


MUSEUM = ("The Halden museum opened in 1901 in the old customs house. Its largest room holds the lens of the Corran "
          "light. The town won the lighthouse's lens from Oban in a lottery, and its visitors rose to 4,000 a year.")


@pytest.mark.parametrize(("question", "expected"), [
    # WordNet's antonym of the lemma, inflected as the question's word was (VBN, JJS, VBD, VBD)
    ("When was the museum opened?", "When was the museum closed?"),
    ("What does the largest room hold?", "What does the smallest room hold?"),
    ("Who won the lens from Oban?", "Who lost the lens from Oban?"),
    ("How far did its visitors rise?", "How far did its visitors fall?"),
])
def test_an_antonym_from_wordnet_replaces_a_word_the_passage_states_inflected_as_it_was(question, expected):
    assert antonym_negative(example(question, "1901" if "When" in question else "4,000", MUSEUM)).question \
        == expected


def test_no_antonym_where_the_passage_does_not_state_the_word_or_already_uses_its_antonym():
    # "founded": the passage never says the museum was founded, so "When was it abolished?" would contradict nothing
    assert antonym_negative(example("When was the museum founded?", "1901", MUSEUM)) is None
    # a word inside a hyphenated one is not turned round ("germ-free" → "germ-unfree")
    assert antonym_negative(example("Which room is dust-free?", "1901", MUSEUM + " One room is dust-free.")) is None
    # the passage uses "closed" too (any form of "close"): it may say when it closed
    closed = MUSEUM + " It closes in winter."
    assert antonym_negative(example("When was the museum opened?", "1901", closed)) is None


QUESTION_ENTITIES = (NamedEntity("first", "ORDINAL", 21, 26), NamedEntity("Margaret Ellison", "PERSON", 4, 20))
ARTICLE_ENTITIES = [NamedEntity("John Avery", "PERSON", 0, 0), NamedEntity("Margaret Ellison", "PERSON", 0, 0),
                    NamedEntity("Ellison", "PERSON", 0, 0), NamedEntity("Thomas Reid", "PERSON", 0, 0),
                    NamedEntity("Oban", "GPE", 0, 0), NamedEntity("Reid", "ORG", 0, 0)]


def test_an_entity_swap_takes_another_of_the_label_from_the_article_that_the_passage_never_names():
    question = example("Did Margaret Ellison first design it?", "Margaret Ellison")
    # "first" is an ORDINAL (not swapped); among PERSONs: Avery is in the passage, "Margaret Ellison" and
    # "Ellison" share a word with the question's, Oban is a GPE, "Reid" an ORG: Thomas Reid is left
    negative = entity_swap_negative(question, QUESTION_ENTITIES, ARTICLE_ENTITIES, random.Random(0))
    assert perturbed(negative) == ("entity_swap", "Did Thomas Reid first design it?")
    assert negative.id == "q-neg-entity"
    named = LIGHT + " Thomas Reid came later."
    assert entity_swap_negative(example(question.question, "Margaret Ellison", named), QUESTION_ENTITIES,
                                ARTICLE_ENTITIES, random.Random(0)) is None


def test_an_entity_swap_draws_among_the_candidates_in_their_sorted_order():
    question = example("Did Margaret Ellison first design it?", "Margaret Ellison")
    more = [*ARTICLE_ENTITIES, NamedEntity("Anna Berg", "PERSON", 0, 0)]
    for seed in range(6):
        drawn = random.Random(seed).choice(["Anna Berg", "Thomas Reid"])  # the standard library's seeded draw
        negative = entity_swap_negative(question, QUESTION_ENTITIES, more, random.Random(seed))
        assert negative.question == f"Did {drawn} first design it?"


POINT = "The lighthouse on Corran Point was designed by Margaret Ellison. Fishing boats from Halden Bay pass it."
POINT_ENTITIES = [NamedEntity("Corran Point", "LOC", 0, 0), NamedEntity("Halden Bay", "LOC", 0, 0),
                  NamedEntity("Margaret Ellison", "PERSON", 0, 0), NamedEntity("Thomas Reid", "PERSON", 0, 0),
                  NamedEntity("Super Bowl XLVII", "EVENT", 0, 0)]


def test_a_name_word_swap_changes_one_end_of_a_name_to_that_end_of_another_name_of_its_label():
    question = example("Who designed the lighthouse on Corran Point?", "Margaret Ellison", POINT)
    entities = (NamedEntity("Corran Point", "LOC", 31, 43),)
    for seed in range(6):
        # by hand: the first word becomes the first word of the other LOC (Halden), the last its last (Bay);
        # which end is the standard library's seeded draw, as the generator makes it
        place = random.Random(seed).choice([0, -1])
        expected = "Halden Point" if place == 0 else "Corran Bay"
        negative = name_word_swap_negative(question, entities, POINT_ENTITIES, random.Random(seed))
        assert perturbed(negative) == ("entity_swap", f"Who designed the lighthouse on {expected}?")


def test_a_roman_numeral_is_no_word_of_a_name():
    passage = "The Super Bowl was held in Houston. The Gold Cup and Super Bowl XLVII were elsewhere."
    question = example("Where was the Super Bowl held?", "Houston", passage)
    for seed in range(8):
        negative = name_word_swap_negative(question, (NamedEntity("Super Bowl", "EVENT", 14, 24),),
                                           [*POINT_ENTITIES, NamedEntity("Gold Cup", "EVENT", 0, 0)],
                                           random.Random(seed))
        assert negative.question in ("Where was the Gold Bowl held?", "Where was the Super Cup held?")


def test_no_name_word_swap_for_a_name_the_passage_does_not_give_a_one_word_name_or_a_name_it_gives():
    entities = (NamedEntity("Corran Point", "LOC", 31, 43),)
    elsewhere = example("Who designed the lighthouse on Corran Point?", "Margaret Ellison",
                        POINT.replace("Corran Point", "the point"))
    assert name_word_swap_negative(elsewhere, entities, POINT_ENTITIES, random.Random(0)) is None
    one_word = example("Who designed the lighthouse on Corran?", "Margaret Ellison", POINT)
    assert name_word_swap_negative(one_word, (NamedEntity("Corran", "LOC", 31, 37),), POINT_ENTITIES,
                                   random.Random(0)) is None
    # both swaps name places the passage gives ("Halden Point", "Corran Bay" added): no question left to ask
    named = example("Who designed the lighthouse on Corran Point?", "Margaret Ellison",
                    POINT + " Halden Point and Corran Bay are near.")
    assert name_word_swap_negative(named, entities, POINT_ENTITIES, random.Random(0)) is None
    # a person's name takes a word of another person's (Thomas, Reid), not of a place's
    person = example("Which boats did Margaret Ellison see?", "Fishing boats", POINT)
    swapped = name_word_swap_negative(person, (NamedEntity("Margaret Ellison", "PERSON", 16, 32),),
                                      POINT_ENTITIES, random.Random(0)).question
    assert swapped in ("Which boats did Thomas Ellison see?", "Which boats did Margaret Reid see?")


def test_an_entity_the_question_already_names_and_times_are_not_swapped_in():
    question = example("Did Margaret Ellison or Thomas Reid design it?", "Margaret Ellison")
    entities = (NamedEntity("Margaret Ellison", "PERSON", 4, 20),)
    assert entity_swap_negative(question, entities, ARTICLE_ENTITIES, random.Random(0)) is None
    # nor one sharing a capitalised word with the question: "Genghis Khagan" for the "Khan" of "Genghis Khan"
    khan = example("Who was Genghis Khan?", "John Avery")
    assert entity_swap_negative(khan, (NamedEntity("Khan", "PERSON", 16, 20),),
                                [NamedEntity("Genghis Khagan", "PERSON", 0, 0)], random.Random(0)) is None
    assert entity_swap_negative(khan, (NamedEntity("Khan", "PERSON", 16, 20),),
                                [NamedEntity("Kublai", "PERSON", 0, 0)], random.Random(0)).question == \
        "Who was Genghis Kublai?"
    time = example("What ran at night?", "Ships")
    assert entity_swap_negative(time, (NamedEntity("night", "TIME", 12, 17),),
                                [NamedEntity("dawn", "TIME", 0, 0)], random.Random(0)) is None


def test_an_entity_swap_reads_the_question_with_spacy():
    # spaCy's recogniser: "Margaret Ellison" a PERSON; the article's other person is swapped in
    negative = perturbed_negative(example("Who hired Margaret Ellison?", "Margaret Ellison"), ["entity_swap"],
                                  random.Random(0), lambda: [NamedEntity("Thomas Reid", "PERSON", 0, 0)], tuple)
    assert perturbed(negative) == ("entity_swap", "Who hired Thomas Reid?")


def words(text, tags):
    """text's words (split on spaces, the question mark apart) with the tags given, one per word."""
    found, at = [], 0
    for word, tag in zip(text.replace("?", " ?").split(), tags, strict=True):
        at = text.index(word, at)
        found.append(WrittenWord(word, at, at + len(word), tag))
        at += len(word)
    return found


ARTICLE_NOUNS = [WrittenWord(text, 0, 0, tag) for text, tag in (
    ("keepers", "NNS"), ("harbour", "NN"), ("Harbour", "NN"), ("year", "NN"), ("light", "NN"), ("gas", "NN"),
    ("ox", "NN"), ("boats", "NNS"), ("engineer", "NN"), ("tower", "NNP"), ("2nd", "NN"), ("bell", "NN"),
    ("Type", "NN"))]


def test_a_noun_swap_takes_a_noun_of_the_tag_from_the_article_that_neither_passage_nor_question_uses():
    question = "Who was the engineer who designed the year bell?"
    tags = ["WP", "VBD", "DT", "NN", "WP", "VBD", "DT", "NN", "NN", "."]
    # "engineer" is the first NN the passage uses ("year" frames a question; "bell" is nowhere in LIGHT). Among the
    # article's NNs: "engineer" is in the passage, "bell" in the question, "year" and "Type" frame nouns, "ox" too short,
    # "2nd" not a word; "harbour" (twice in the article), "gas" and "light" (LIGHT has only "lighthouse") are left,
    # drawn as the standard library's seeded choice draws from the sorted three
    for seed in range(6):
        drawn = random.Random(seed).choice(["gas", "harbour", "light"])
        negative = noun_swap_negative(example(question, "Margaret Ellison"), words(question, tags), ARTICLE_NOUNS,
                                      random.Random(seed))
        assert perturbed(negative) == ("entity_swap", f"Who was the {drawn} who designed the year bell?")
    # a plural is replaced by a plural, in the case of the word it replaces
    plural = "Who kept the Lighthouses?"
    negative = noun_swap_negative(example(plural, "John Avery", LIGHT + " Two lighthouses stood."),
                                  words(plural, ["WP", "VBD", "DT", "NNS", "."]), ARTICLE_NOUNS, random.Random(0))
    drawn = random.Random(0).choice(["boats", "keepers"])  # the passage says "keeper", never "keepers"
    assert negative.question == f"Who kept the {drawn.capitalize()}?"


def test_a_noun_swap_needs_a_question_noun_the_passage_uses_and_an_article_noun_it_does_not():
    question = "Who designed the bell?"
    assert noun_swap_negative(example(question, "Margaret Ellison"), words(question, ["WP", "VBD", "DT", "NN", "."]),
                              ARTICLE_NOUNS, random.Random(0)) is None  # "bell" is not in the passage
    lit = "Who lit the light?"
    assert noun_swap_negative(example(lit, "John Avery"), words(lit, ["WP", "VBD", "DT", "NN", "."]),
                              [WrittenWord("keeper", 0, 0, "NN"), WrittenWord("lighthouse", 0, 0, "NN")],
                              random.Random(0)) is None  # every article noun is in the passage
    # a noun that frames the question is not swapped, even where the passage uses it
    framed = "In which year was the engineer paid?"
    negative = noun_swap_negative(example(framed, "1872", LIGHT + " That Year it rained."),
                                  words(framed, ["IN", "WDT", "NN", "VBD", "DT", "NN", "VBN", "."]), ARTICLE_NOUNS,
                                  random.Random(0))
    assert negative.question.startswith("In which year was the ") and "engineer" not in negative.question
    proper = "Who lit Corran?"  # a proper noun is the entity swap's, not this one's
    assert noun_swap_negative(example(proper, "John Avery"), words(proper, ["WP", "VBD", "NNP", "."]),
                              ARTICLE_NOUNS, random.Random(0)) is None


def test_an_entity_swap_falls_back_to_a_noun_swap_where_the_question_names_no_entity():
    # spaCy finds no entity in "Who designed the lighthouse?" and tags "lighthouse" NN; the article's only other
    # noun is swapped in
    negative = perturbed_negative(example("Who designed the lighthouse?", "Margaret Ellison"), ["entity_swap"],
                                  random.Random(0), tuple, lambda: [WrittenWord("windmill", 0, 0, "NN")])
    assert perturbed(negative) == ("entity_swap", "Who designed the windmill?")


def test_not_is_inserted_before_the_verb_after_the_auxiliary_where_the_passage_holds_no_negation():
    assert perturbed(negation_negative(example("When was the lighthouse designed?", "Margaret Ellison"))) == \
        ("negation", "When was the lighthouse not designed?")
    assert negation_negative(example("What did ships from Halden pass?", "it")).question == \
        "What did ships from Halden not pass?"
    assert negation_negative(example("What was built on Corran Point?", "The lighthouse")).question == \
        "What was not built on Corran Point?"  # the verb right after the auxiliary
    assert negation_negative(example("Who was the first keeper?", "John Avery")) is None  # no verb after "was"
    assert negation_negative(example("Who designed it?", "Margaret Ellison")) is None  # no auxiliary
    refused = LIGHT + " It was never painted."
    assert negation_negative(example("When was the lighthouse designed?", "Margaret Ellison", refused)) is None
    assert negation_negative(example("Why wasn't it lit sooner?", "1872")) is None  # a negation kept, not doubled


def test_the_first_auxiliary_decides_where_not_goes():
    question = example("Who was it designed by, and who has lit it?", "Margaret Ellison")
    words = [WrittenWord(text, question.question.index(text), question.question.index(text) + len(text), tag)
             for text, tag in (("Who", "WP"), ("was", "VBD"), ("it", "PRP"), ("designed", "VBN"), ("has", "VBZ"),
                               ("lit", "VBN"))]
    assert negation_negative(question, lambda _: words).question == "Who was it not designed by, and who has lit it?"
    nothing = [WrittenWord("Who", 0, 3, "WP"), WrittenWord("was", 4, 7, "VBD"), WrittenWord("it", 8, 10, "PRP")]
    assert negation_negative(question, lambda _: nothing) is None  # the verb after "was" is not found: no guess
    # a verb right before the auxiliary is not the one negated (the tags by hand: the rule, not the tagger)
    before = example("Built was it lit?", "1872")
    tagged = [WrittenWord("Built", 0, 5, "VBN"), WrittenWord("was", 6, 9, "VBD"), WrittenWord("it", 10, 12, "PRP"),
              WrittenWord("lit", 13, 16, "VBN")]
    assert negation_negative(before, lambda _: tagged).question == "Built was it not lit?"


def test_a_negation_is_removed_only_where_the_answers_sentence_holds_it():
    passage = "Ships from Halden never passed the rocks. Ships from Oban did."
    negative = negation_negative(example("Ships from which port never passed the rocks?", "Halden", passage))
    assert perturbed(negative) == ("negation", "Ships from which port passed the rocks?")
    assert negation_negative(example("Which port did not send ships?", "Oban", passage)) is None
    # the sentence holding the answer decides, not its neighbours: an answer sentence without the negation, an
    # answer ending in the space before the sentence that holds it, or starting in the space after it
    beside = "Ships from Halden did not pass. Ships from Oban did."
    assert negation_negative(example("Which ships did not pass?", "Oban", beside)) is None
    assert negation_negative(example("Which ships did not pass?", "Halden did not pass.", beside)).question == \
        "Which ships did pass?"
    ends_in_space = "Ships from Oban sailed on. Ships from Halden did not pass."
    assert negation_negative(example("Which ships did not pass?", "Oban sailed on. ", ends_in_space)) is None
    starts_in_space = Example("s", beside, "Which ships did not pass?",
                              answers=(GoldAnswer(" Ships from Oban", beside.index(" Ships from Oban")),))
    assert negation_negative(starts_in_space) is None
    # with two answers, the negation ending one answer sentence is still a whole word
    two = "The keeper said never. Avery agreed."
    both = Example("t", two, "Who never agreed?", answers=(GoldAnswer("keeper", 4), GoldAnswer("Avery", 23)))
    assert negation_negative(both).question == "Who agreed?"
    assert negation_negative(example("Which port did NOT send ships?", "Halden",
                                     "Halden did not send ships. Oban did.")).question == "Which port did send ships?"


def test_an_ordinal_moves_on_where_the_passage_names_the_next_in_neither_words_nor_figures():
    assert perturbed(mutual_exclusion_negative(example("Who was the first keeper?", "John Avery"))) == \
        ("mutual_exclusion", "Who was the second keeper?")
    assert mutual_exclusion_negative(example("Who was The Third keeper?", "John Avery")).question == \
        "Who was The Fourth keeper?"
    assert mutual_exclusion_negative(example("Who was the first keeper?", "John Avery",
                                             LIGHT + " The 2nd came later.")) is None
    # "third" is named, so "the second" stays and the next "the <ordinal>" of the question is moved
    two = example("After the second war, who was the ninth keeper?", "John Avery", LIGHT + " A third light.")
    assert mutual_exclusion_negative(two).question == "After the second war, who was the tenth keeper?"
    assert mutual_exclusion_negative(example("Who was the tenth keeper?", "John Avery")) is None  # none after it
    assert mutual_exclusion_negative(example("Who was first?", "John Avery")) is None  # no "the"


class Drawn(random.Random):
    """A draw fixed by hand: random() and randint() return what they are given."""

    def __init__(self, uniform: float, gap: int):
        super().__init__(0)
        self.uniform, self.gap = uniform, gap

    def random(self):
        return self.uniform

    def randint(self, low, high):
        assert (low, high) == (10, 40)
        return self.gap


def test_a_year_moves_outside_every_year_of_the_passage_on_the_side_drawn():
    question = example("Who kept the light in 1872?", "John Avery")
    # the passage's years are 1872 and 1986: later is 1986 + 15, earlier 1872 − 15
    assert perturbed(impossible_condition_negative(question, Drawn(0.2, 15))) == \
        ("impossible_condition", "Who kept the light in 2001?")
    assert impossible_condition_negative(question, Drawn(0.7, 15)).question == "Who kept the light in 1857?"
    assert impossible_condition_negative(question, Drawn(0.5, 40)).question == "Who kept the light in 1832?"
    # a question year outside the passage's range widens it
    assert impossible_condition_negative(example("Who kept it in 1990?", "John Avery"), Drawn(0.1, 10)).question == \
        "Who kept it in 2000?"
    # a passage ending in a year without a full stop: that year still counts (1986, not the question's 1900)
    bare = example("Who kept it in 1900?", "Avery", "Avery lit it in 1872 and it was automated in 1986")
    assert impossible_condition_negative(bare, Drawn(0.1, 10)).question == "Who kept it in 1996?"
    assert impossible_condition_negative(example("In the 1990s, who kept it?", "John Avery"), Drawn(0.1, 10)) is None
    assert impossible_condition_negative(example("Who kept it?", "John Avery"), Drawn(0.1, 10)) is None


def test_perturbed_negative_tries_the_kinds_in_the_order_given():
    question = example("Who was the first keeper?", "John Avery")
    nothing = tuple  # the article's entities and nouns: none
    assert perturbed_negative(question, ["mutual_exclusion", "antonym"], random.Random(0), nothing,
                              nothing).question == "Who was the second keeper?"
    assert perturbed_negative(question, ["impossible_condition", "antonym"], random.Random(0), nothing,
                              nothing).question == "Who was the last keeper?"
    assert perturbed_negative(question, ["impossible_condition", "negation"], random.Random(0), nothing,
                              nothing) is None
    assert perturbed_negative(example("Who kept the light in 1872?", "John Avery"), ["impossible_condition"],
                              Drawn(0.2, 15), nothing, nothing).question == "Who kept the light in 2001?"
    with pytest.raises(ValueError) as refused:
        perturbed_negative(question, ["synonym"], random.Random(0), nothing, nothing)
    assert str(refused.value) == ("no perturbation is called 'synonym'; the kinds are antonym, entity_swap, negation, "
                                  "mutual_exclusion, impossible_condition, role_swap, vague_quantity")


def test_every_kind_has_its_own_id_suffix_that_names_it_back():
    assert len(set(KINDS.values())) == len(KINDS) == 9
    for kind, suffix in KINDS.items():
        assert negative_kind("56be4db0acb8001400a502ec" + suffix) == kind
        assert not any(other != suffix and suffix.endswith(other) for other in KINDS.values())
    assert list(PERTURBATIONS) == ["antonym", "entity_swap", "negation", "mutual_exclusion", "impossible_condition",
                                   "role_swap", "vague_quantity"]


def test_occurs_matches_whole_normalised_words():
    assert occurs("the Last", "He was LAST.") and occurs("2nd", "the 2nd one")
    assert not occurs("last", "at lastly") and not occurs("", "anything") and not occurs("a", "a tree")


@pytest.mark.parametrize("word, like, expected", [("last", "first", "last"), ("last", "First", "Last"),
                                                  ("last", "FIRST", "LAST"), ("close", "Opened", "Close")])
def test_a_replacement_is_written_in_the_case_of_the_word_it_replaces(word, like, expected):
    assert cased_like(word, like) == expected


FOUR = [example("Who was the first keeper?", "John Avery", id="k1"),
        example("When was the light first lit?", "1872", id="k2"),
        example("Who designed the lighthouse?", "Margaret Ellison", id="k3"),
        example("Where did the ships come from?", "Halden", id="k4"),
        example("What did ships from Halden pass every night?", "it", id="k5"),
        example("Until when did ships pass it?", "1986", id="k6")]


def test_perturbations_take_their_share_of_the_negatives_in_the_drawn_order():
    # 6 questions, share 1/3: 3 negatives; perturbed 2/3: 2 perturbations, in_context 0, so 1 other-paragraph.
    # Seed 0 draws k5, k3, k2 first (the standard library's shuffle). By hand:
    # k5: a perturbation is short of its share, so first; antonym (no listed word) and entity swap ("Halden": the
    #     article's only paragraph names every entity it has) fail, negation inserts "not" before "pass";
    # k3: still short; of the kinds only the role swap fits "Who designed the lighthouse?" (no listed word,
    #     entity, auxiliary, ordinal or year; "designed" is stated): a role verb LIGHT never uses, drawn;
    # k2: antonym is now among the least made: "first" → "last".
    negatives = with_negatives(FOUR, in_context=0.0, perturbed=2 / 3, seed=0)[len(FOUR):]
    assert [(n.id, n.question) for n in negatives[::2]] == [
        ("k5-neg-not", "What did ships from Halden not pass every night?"),
        ("k2-neg-antonym", "When was the light last lit?")]
    role = negatives[1]
    verb = role.question.removeprefix("Who ").removesuffix(" the lighthouse?")
    assert role.id == "k3-neg-role" and lemma(verb, "VBD") in ROLE_VERBS - {"design"} and not occurs(verb, LIGHT)
    assert negatives[0].passage == negatives[2].passage == LIGHT and not any(n.answers for n in negatives)
    with pytest.raises(ValueError, match=r"^perturbed must be in \[0, 1 - in_context\]"):
        with_negatives(FOUR, in_context=0.5, perturbed=0.6)
    with pytest.raises(ValueError, match="perturbed"):
        with_negatives(FOUR, perturbed=-0.1)
    assert with_negatives(FOUR, in_context=0.5, perturbed=0.5)  # the shares may add up to exactly 1


OBAN = "Oban has a harbour."  # a second paragraph of the article: "harbour" (NN) is a noun LIGHT never uses


def in_order(questions, seed=0):
    """The examples placed so that with_negatives' seeded shuffle (the standard library's) reaches them in the order
    given, each asked of LIGHT unless it names its passage; a question on OBAN is added last, so the article holds
    both paragraphs."""
    examples = [*(example(q, a, id=f"e{i}") for i, (q, a) in enumerate(questions)),
                example("What does Oban have?", "a harbour", OBAN, id="oban")]
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    placed = [None] * len(examples)
    for position, index in enumerate(order):
        placed[index] = examples[position]
    return placed


def test_a_perturbation_tries_the_kind_made_least_so_far_first():
    # 4 questions, share 1/3: 2 negatives, both perturbations. "Who was the first keeper?" fits antonym first (every
    # kind made 0 times, PERTURBATIONS' order); then antonym has been made once, so "Who was the first to keep it?"
    # (no entity, no noun, no verb after "was") tries entity swap, negation, then mutual exclusion: "second"
    placed = in_order([("Who was the first keeper?", "John Avery"), ("Who was the first to keep it?", "John Avery"),
                       ("Who kept it?", "John Avery")])
    negatives = with_negatives(placed, in_context=0.0, perturbed=1.0)[len(placed):]
    assert [n.question for n in negatives] == ["Who was the last keeper?", "Who was the second to keep it?"]


def test_the_mix_passes_its_seeded_draw_to_the_noun_swap():
    # one negative: "lighthouse" is a noun LIGHT uses, and the article's only noun LIGHT never uses is OBAN's
    placed = in_order([("Who designed the lighthouse?", "Margaret Ellison")])
    assert [n.question for n in with_negatives(placed, in_context=0.0, perturbed=1.0)[len(placed):]] == [
        "Who designed the harbour?"]


def test_a_family_whose_share_is_met_is_tried_after_those_still_short():
    # 6 questions, share 1/3: 3 negatives, a quota of 1 each. None of these questions can be perturbed (no listed
    # word, entity, noun of the passage, auxiliary, ordinal or year). "Who worked there?" has answers in two of
    # LIGHT's three sentences, so too little is left in context (9 words): other-paragraph (OBAN). "Who engineered
    # it?" goes in context (24 words left). "Who lit it?": in-context is met, and so is other-paragraph, so the
    # order is the families' own, perturbation (fails) then in-context (17 words left), not other-paragraph
    questions = [("Who worked there?", "John Avery"), ("Who engineered it?", "Margaret Ellison"),
                 ("Who lit it?", "John Avery"), ("Who kept it?", "John Avery"), ("Who drew it?", "Margaret Ellison")]
    placed = in_order(questions)
    worked = next(i for i, e in enumerate(placed) if e.question == "Who worked there?")
    placed[worked] = Example(id="e0", passage=LIGHT, question="Who worked there?", title="Corran", answers=(
        GoldAnswer("John Avery", LIGHT.index("John Avery")), GoldAnswer("Margaret Ellison", LIGHT.index("Margaret"))))
    negatives = with_negatives(placed, in_context=1 / 3, perturbed=1 / 3)[len(placed):]
    assert [(n.id, n.passage) for n in negatives] == [
        ("e0-neg-other", OBAN),
        ("e1-neg-ctx", LIGHT.replace(" It was designed by the engineer Margaret Ellison.", "")),
        ("e2-neg-ctx", LIGHT[LIGHT.index("It was designed"):])]


def test_the_negatives_command_writes_the_perturbations_with_their_kind(tmp_path, capsys):
    import json

    from rcqa.cli import main
    from rcqa.data import load_examples
    from rcqa.negatives import squad_v2_document

    source, out = tmp_path / "v1.json", tmp_path / "v2.json"
    source.write_text(json.dumps(squad_v2_document(FOUR)))
    assert main(["negatives", "--data", str(source), "--out", str(out), "--in-context", "0", "--perturbed", "0.667"]) \
        == 0
    counts = json.loads(capsys.readouterr().out)
    written = load_examples(out)
    # the same draw as with_negatives' (seed 0): k5 a negation, k3 a role swap, k2 an antonym
    assert counts == {"questions": 9, "answerable": 6, "negation": 1, "role_swap": 1, "antonym": 1}
    assert {negative_kind(e.id) for e in written if e.is_impossible} == {"negation", "role_swap", "antonym"}
    with pytest.raises(SystemExit, match=r"^perturbed must be in \[0, 1 - in_context\]"):
        main(["negatives", "--data", str(source), "--out", str(out), "--perturbed", "0.9"])
