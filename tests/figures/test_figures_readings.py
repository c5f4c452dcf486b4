"""The words around the charts say what the charts hold: names of the groups, counts, what JSD compares."""
from rcqa.figures import jsd, pos_mix, roles
from tests.helpers.handmade import handmade
from tests.helpers.orchard import PASSAGE, QUESTION, QUESTION_TEXT, SIX_HUNDRED


def result():
    return handmade(QUESTION, PASSAGE, explained=(SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)


def test_the_part_of_speech_group_of_nouns_pronouns_and_numbers_is_named_for_what_it_holds():
    chart = pos_mix(result(), k=5)
    names = [bar.name for bar in chart.figure.data]
    assert "noun, pronoun or number" in names and "entity" not in names
    assert "function word" in names
    # the stored key stays the paper's, so that runs stay comparable with its numbers
    assert "entity" in set(chart.data.category)


def test_a_layer_with_one_top_word_says_word_not_words():
    # block 1 holds attribution on punctuation only; give it one real word
    passage = [(w, t, s if w != "plums" else [0, 0, 1]) for w, t, s in PASSAGE]
    found = handmade(QUESTION, passage, explained=(SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)
    notes = [a.text for a in roles(found, k=5).figure.layout.annotations]
    assert "only 1 top word" in notes and "only 4 top words" in notes


def test_jsd_is_described_as_comparing_distributions_not_ranks():
    subtitle = jsd(result()).figure.layout.title.subtitle.text
    assert "distributions" in subtitle and "rank the passage words" not in subtitle
