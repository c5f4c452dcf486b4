"""Question perturbations: SQuAD 2.0's hard unanswerable questions (Rajpurkar et al. 2018, Table 2) made from an
answerable question by changing a word or two of it, its passage unchanged, so that the question stays fluent and
close to the passage while the passage no longer answers it. One generator per category:

- antonym: a word the passage states replaced by its WordNet antonym, inflected as the word was ("When was the
  museum opened?" → "... closed?", where the passage says it opened and never closed);
- entity_swap: a named entity, number or date of the question (spaCy) replaced by another of the same label from
  the same article, sharing no word with it; or, as people write them, one end of a name changed to that end of
  another name of the article ("Jared Allen" → "Jared Olsen"), each first half the time; where the question names
  none to swap, a common noun of it that the passage uses replaced by another of the article's nouns ("Who
  discovered the comet?" → "... the asteroid?");
- negation: "not" inserted before the verb that follows the question's auxiliary ("What did the Romans control?" →
  "What did the Romans not control?"), or the question's "not" / "never" removed;
- mutual_exclusion: an ordinal moved on ("the first" → "the second");
- impossible_condition: a year moved outside the passage's events (before its earliest year or after its latest).

Each checks the passage. The word or phrase swapped in must occur nowhere in it, not only not next to the
answer: a passage that names "the last keeper" anywhere answers "Who was the last keeper?". A negation is inserted
only where the passage holds none (else it may state the negated fact), and removed only where the sentence of the
answer holds it (so that the question without it asks the opposite of what the passage says of the answer).
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence

from spacy.lang.en.stop_words import STOP_WORDS

from rcqa.evaluate import normalize_answer
from rcqa.negatives.antonyms import TAG_POS, antonyms, forms, lemma
from rcqa.negatives.kinds import PERTURBATIONS, replaced_in_question
from rcqa.negatives.paragraphs import occurs, sentences
from rcqa.negatives.swaps import role_swap_negative, vague_quantity_negative
from rcqa.text import NamedEntity, WrittenWord, named_entities, written_words
from rcqa.types import Example

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_NUMERALS = ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th", "10th")
# the verb tags that may follow each auxiliary, where "not" goes ("did the Romans not control", "was it not built")
AUXILIARIES = {**dict.fromkeys(("do", "does", "did", "can", "could", "will", "would", "should", "may", "might",
                                "must"), ("VB",)),
               **dict.fromkeys(("is", "are", "was", "were"), ("VBN", "VBG")),
               **dict.fromkeys(("has", "have", "had"), ("VBN",))}
NEGATION = re.compile(r"\b(?:not|never|no|nor|neither|none|cannot)\b|n't\b", re.IGNORECASE)
_REMOVABLE = re.compile(r" (?:not|never)\b", re.IGNORECASE)
_ORDINAL = re.compile(r"\bthe (" + "|".join(ORDINALS[:-1]) + r")\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:1\d{3}|20\d{2})\b")
YEAR_GAP = (10, 40)  # a year moved outside the passage's events lands this many years (drawn) beyond them
_WORD = re.compile(r"[A-Za-z]+")
_ROMAN = re.compile(r"[IVXLCDM]+")
# spaCy's labels of names, numbers and dates; not ordinals (mutual_exclusion moves them), nor times, quantities,
# money or percentages ("850 AM" for "30-second" reads as no question at all)
SWAPPED_LABELS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW",
                            "LANGUAGE", "DATE", "CARDINAL"})
# the labels of names whose words a name-word swap changes (not numbers and dates: the entity swap moves those)
NAME_LABELS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"})
NOUN_TAGS = frozenset({"NN", "NNS"})
# nouns that frame a question rather than name what it asks about ("what type of", "in which year", "how much time")
FRAME_NOUNS = frozenset({"type", "types", "kind", "kinds", "sort", "name", "names", "year", "years", "number", "part",
                         "percentage", "percent", "amount", "time", "times", "way", "ways", "date", "day", "days",
                         "period", "term", "terms", "word", "words", "thing", "things", "one", "ones"})


def antonym_negative(example: Example,
                     tagged: Callable[[str], Sequence[WrittenWord]] = written_words) -> Example | None:
    """The first word of the question whose lemma the passage states as the same kind of word (_stated_as: "opened"
    where the passage says the museum opens; not "light" misread as an adjective where the passage says a lamp was
    lit) and
    that has an antonym (rcqa.negatives.antonyms, WordNet's; not an ordinal) the passage never uses in any form,
    replaced by that antonym inflected as the word was (tagged: words with their Penn Treebank tags, spaCy's by
    default, read for the question and, once it has a candidate, for the passage)."""
    stated = None
    for word in tagged(example.question):
        candidates = [a for a in antonyms(word.text, word.tag) if a.lower() not in ORDINALS]  # first → second: a
        if not word.text.isalpha() or not candidates or _in_compound(example.question, word):  # mutual exclusion
            continue
        if stated is None:
            stated = {_stated_as(w) for w in tagged(example.passage)}
        if _stated_as(word) not in stated:
            continue
        for antonym in candidates:
            if not uses_word(example.passage, antonym, word.tag):
                return replaced_in_question(example, "antonym", word.start_char, word.end_char,
                                            cased_like(antonym, word.text))
    return None


def uses_word(passage: str, word: str, tag: str) -> bool:
    """Whether the passage uses the word in any of its forms (its lemma for the tag, inflected every way)."""
    return any(occurs(form, passage) for form in forms(lemma(word, tag)) | {word})


def _in_compound(text: str, word: WrittenWord) -> bool:
    """Whether the word is part of a hyphenated one ("germ-free": "germ-unfree" is no word)."""
    return text[word.start_char - 1:word.start_char] == "-" or text[word.end_char:word.end_char + 1] == "-"


def _stated_as(word: WrittenWord) -> tuple[str, str]:
    """A word's lemma and its kind: a verb, a modifier (adjectives and adverbs alike: "the first keeper", "first
    lit") or any other tag as it is."""
    pos = TAG_POS.get(word.tag, (word.tag,))[0]
    return lemma(word.text, word.tag), "modifier" if pos in ("adj", "adv") else pos


def entity_swap_negative(example: Example, question_entities: Sequence[NamedEntity],
                         article_entities: Iterable[NamedEntity], rng: random.Random) -> Example | None:
    """The first entity of the question with a label of SWAPPED_LABELS for which the article has another of its
    label that the passage never names, sharing no word with it nor a capitalised word with the question ("Khan" is
    no swap for "Genghis Khagan"), replaced by one of those drawn with rng."""
    article_entities = list(article_entities)
    named = _capitalised(example.question)
    for entity in question_entities:
        own = set(normalize_answer(entity.text).split())
        if entity.label not in SWAPPED_LABELS or not own:
            continue
        candidates = sorted({e.text for e in article_entities if e.label == entity.label
                             and normalize_answer(e.text) and not own & set(normalize_answer(e.text).split())
                             and not named & _capitalised(e.text) and not occurs(e.text, example.passage)})
        if candidates:
            return replaced_in_question(example, "entity_swap", entity.start_char, entity.end_char, rng.choice(candidates))
    return None


def name_word_swap_negative(example: Example, question_entities: Sequence[NamedEntity],
                            article_entities: Iterable[NamedEntity], rng: random.Random) -> Example | None:
    """The entity swap people write: one capitalised word of a name of two words or more that the question and the
    passage share replaced by the word in the same place (first or last) of another name of the article, so that
    the question asks about a name the passage never gives ("Jared Allen" → "Jared Olsen", where the article names
    Olsen; "the Duchy of Normandy" → "the Duchy of England"). The word comes from names of the same label where the
    article has any, else from any of NAME_LABELS; the word replaced and the one put in are drawn with rng."""
    article_entities = list(article_entities)
    for entity in question_entities:
        words = _WORD.findall(entity.text)
        if entity.label not in NAME_LABELS or len(words) < 2 or not occurs(entity.text, example.passage):
            continue
        ends = [place for place in (0, -1) if _name_word(words[place])]
        if not ends:
            continue
        place = rng.choice(ends)
        used = set(words) | _capitalised(example.question)
        same = _words_at(place, (e for e in article_entities if e.label == entity.label)) - used
        pool = sorted(same or _words_at(place, (e for e in article_entities if e.label in NAME_LABELS)) - used)
        replaced = list(_WORD.finditer(entity.text))[place]
        for word in rng.sample(pool, len(pool)):
            name = entity.text[:replaced.start()] + word + entity.text[replaced.end():]
            if not occurs(name, example.passage):
                start = entity.start_char + replaced.start()
                return replaced_in_question(example, "entity_swap", start, start + len(replaced.group()), word)
    return None


def _name_word(word: str) -> bool:
    """A word that names (capitalised, three letters or more), not a function word ("of", "The", "Most") nor a
    Roman numeral ("Super Bowl XLVII")."""
    return word[0].isupper() and len(word) > 2 and word.lower() not in STOP_WORDS and not _ROMAN.fullmatch(word)


def _words_at(place: int, entities: Iterable[NamedEntity]) -> set[str]:
    """The word at place (0: first, -1: last) of each name of two words or more, where it is a _name_word."""
    return {words[place] for entity in entities if len(words := _WORD.findall(entity.text)) > 1
            and _name_word(words[place])}


def noun_swap_negative(example: Example, question_words: Sequence[WrittenWord],
                       article_nouns: Iterable[WrittenWord], rng: random.Random) -> Example | None:
    """The first common noun of the question (NN / NNS, not one of FRAME_NOUNS) that the passage uses, replaced by a
    noun of the same tag from the article that neither the passage nor the question uses, drawn with rng (lower-cased,
    then written in the case of the word it replaces): the entity swap where the question names no entity to swap."""
    unused = None  # (tag, noun) of the article that neither passage nor question uses, each checked once
    for word in question_words:
        if (word.tag not in NOUN_TAGS or not word.text.isalpha() or word.text.lower() in FRAME_NOUNS
                or not occurs(word.text, example.passage)):
            continue
        if unused is None:
            pool = {(noun.tag, noun.text.lower()) for noun in article_nouns if noun.tag in NOUN_TAGS
                    and noun.text.isalpha() and len(noun.text) > 2 and noun.text.lower() not in FRAME_NOUNS}
            unused = {(tag, text) for tag, text in pool
                      if not occurs(text, example.passage) and not occurs(text, example.question)}
        candidates = sorted(text for tag, text in unused if tag == word.tag)
        if candidates:
            return replaced_in_question(example, "entity_swap", word.start_char, word.end_char,
                            cased_like(rng.choice(candidates), word.text))
    return None


def negation_negative(example: Example,
                      tagged: Callable[[str], Sequence[WrittenWord]] = written_words) -> Example | None:
    """The question's "not" / "never" removed where the answer's sentence holds it; in a question without one,
    "not" inserted before the verb after its first auxiliary where the passage holds no negation (tagged: the
    question's words with their Penn Treebank tags, spaCy's by default, read only then)."""
    if removable := _REMOVABLE.search(example.question):
        said = " ".join(example.passage[s:e] for s, e in _answer_sentences(example))
        if not occurs(removable.group(), said):
            return None
        return replaced_in_question(example, "negation", removable.start(), removable.end(), "")
    if NEGATION.search(example.question) or NEGATION.search(example.passage):
        return None
    question_words = tagged(example.question)
    for index, word in enumerate(question_words):
        if (tags := AUXILIARIES.get(word.text.lower())) is not None:
            verb = next((w for w in question_words[index + 1:] if w.tag in tags), None)
            return None if verb is None else replaced_in_question(example, "negation", verb.start_char, verb.start_char, "not ")
    return None


def mutual_exclusion_negative(example: Example) -> Example | None:
    """The first "the <ordinal>" of the question moved on to the next ordinal, where the passage names that one
    neither in words nor in figures ("second", "2nd")."""
    for match in _ORDINAL.finditer(example.question):
        following = ORDINALS.index(match.group(1).lower()) + 1
        if not occurs(ORDINALS[following], example.passage) and not occurs(_NUMERALS[following], example.passage):
            return replaced_in_question(example, "mutual_exclusion", match.start(1), match.end(1),
                            cased_like(ORDINALS[following], match.group(1)))
    return None


def impossible_condition_negative(example: Example, rng: random.Random) -> Example | None:
    """The question's first year moved outside every year of the passage and the question: a gap drawn from
    YEAR_GAP before the earliest or after the latest (the side drawn too)."""
    match = _YEAR.search(example.question)
    if match is None:
        return None
    years = [int(y) for y in _YEAR.findall(example.passage + " " + example.question)]
    later, gap = rng.random() < 0.5, rng.randint(*YEAR_GAP)
    moved = str(max(years) + gap if later else min(years) - gap)
    return replaced_in_question(example, "impossible_condition", match.start(), match.end(), moved)


def perturbed_negative(example: Example, kinds: Iterable[str], rng: random.Random,
                       article_entities: Callable[[], Iterable[NamedEntity]],
                       article_nouns: Callable[[], Iterable[WrittenWord]]) -> Example | None:
    """The first of the kinds (PERTURBATIONS' names) whose generator can perturb the question; None if none can.
    spaCy reads the question (and article_entities / article_nouns the article) only for the kinds that need it; an
    entity swap (_entity_swap) changes a whole name or one word of it, else a noun."""
    for kind in kinds:
        if kind == "antonym":
            built = antonym_negative(example)
        elif kind == "entity_swap":
            built = _entity_swap(example, rng, article_entities, article_nouns)
        elif kind == "negation":
            built = negation_negative(example)
        elif kind == "mutual_exclusion":
            built = mutual_exclusion_negative(example)
        elif kind == "impossible_condition":
            built = impossible_condition_negative(example, rng)
        elif kind == "role_swap":
            built = role_swap_negative(example, rng)
        elif kind == "vague_quantity":
            built = vague_quantity_negative(example, rng)
        else:
            raise ValueError(f"no perturbation is called {kind!r}; the kinds are {', '.join(PERTURBATIONS)}")
        if built is not None:
            return built
    return None


def _entity_swap(example: Example, rng: random.Random, article_entities: Callable[[], Iterable[NamedEntity]],
                 article_nouns: Callable[[], Iterable[WrittenWord]]) -> Example | None:
    """An entity swap: a whole name swapped or one word of it, half the time each first (drawn with rng); where the
    question has no name to swap, a noun swap."""
    question_entities = named_entities([example.question])[0]
    swaps = [entity_swap_negative, name_word_swap_negative]
    if rng.random() < 0.5:
        swaps.reverse()
    return (swaps[0](example, question_entities, article_entities(), rng)
            or swaps[1](example, question_entities, article_entities(), rng)
            or noun_swap_negative(example, written_words(example.question), article_nouns(), rng))


def _answer_sentences(example: Example) -> list[tuple[int, int]]:
    spans = [(a.start_char, a.start_char + len(a.text)) for a in example.answers if a.start_char >= 0]
    return [(s, e) for s, e in sentences(example.passage) if any(s < end and start < e for start, end in spans)]


def _capitalised(text: str) -> set[str]:
    return {word for word in _WORD.findall(text) if word[0].isupper()}


def cased_like(word: str, like: str) -> str:
    """The word written in the case of the word it replaces: "First" → "Last", "FIRST" → "LAST"."""
    if like.isupper():  # no generator replaces a one-letter word, where "A" would read as capitalised
        return word.upper()
    return word.capitalize() if like[:1].isupper() else word
