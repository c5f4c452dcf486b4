"""Whether the training's antonym generator could have written a question: a hand-written antonym negative turned
back into the answerable question it denies (its twin, the passage's word put back), which antonym_negative must
turn into the hand-written question again, word for word. It tells the hand-written misses of a kind the model was
trained on from those no generator writes (docs/abstention.md, "Where the 6-layer model stops")."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from rcqa.negatives.antonyms import antonyms
from rcqa.negatives.perturbations import antonym_negative, cased_like, uses_word
from rcqa.text import WrittenWord, written_words
from rcqa.types import Example

PLAIN_TAGS = ("VB", "JJ", "RB")  # the plain forms of the parts of speech with antonyms


def antonym_twins(example: Example,
                  tagged: Callable[[str], Sequence[WrittenWord]] = written_words) -> list[Example]:
    """The questions an antonym negative may deny: for each word of its question that the passage never uses, in any
    form, each antonym of it that the passage does use, put in its place as the word was inflected and cased. A
    word is read as tagged and, failing antonyms there, as a verb, adjective or adverb in its plain form: a tagger
    reads the word a hand-written question swapped in, out of place, by its look ("end service" as a noun), while
    the generator reads the twin's word, in place ("begin service", a verb)."""
    twins = []
    for word in tagged(example.question):
        if not word.text.isalpha() or uses_word(example.passage, word.text, word.tag):
            continue
        tag = next((tag for tag in (word.tag, *PLAIN_TAGS) if antonyms(word.text, tag)), word.tag)
        for antonym in antonyms(word.text, tag):
            if uses_word(example.passage, antonym, tag):
                question = (example.question[:word.start_char] + cased_like(antonym, word.text)
                            + example.question[word.end_char:])
                twins.append(replace(example, id=f"{example.id}-twin", question=question, is_impossible=False))
    return twins


def written_by_antonym_generator(example: Example,
                                 tagged: Callable[[str], Sequence[WrittenWord]] = written_words) -> bool:
    """Whether antonym_negative, given one of the question's twins, writes exactly this question."""
    return any((negative := antonym_negative(twin, tagged)) is not None and negative.question == example.question
               for twin in antonym_twins(example, tagged))

