"""Two more hard unanswerable kinds, as people write them (issue 45): a role swapped and a count asked of a group the
passage only describes.

- role_swap: the question's verb of who-did-what ("designed", "founded") replaced by another role verb the passage
  never uses in any form ("Who designed the lighthouse?" → "Who funded the lighthouse?"), inflected as it was.
  The role verbs are listed (ROLE_VERBS): WordNet's sister terms, the lexicon's way, were tried and read as no
  question a person asks (build → bloom, write → nod, paint → glaze), since WordNet files these verbs under broad
  parents ("create", "communicate") that hold hundreds of senses.
- vague_quantity: "How many <noun>" asked of another plural noun that the passage only describes with a vague
  quantifier ("most residents", "several pickers") and never counts anywhere ("How many trees …" → "How many
  residents …", where the passage says "most residents work in the canneries").
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from rcqa.negatives.antonyms import forms, inflected, lemma
from rcqa.negatives.kinds import replaced_in_question
from rcqa.negatives.paragraphs import occurs
from rcqa.text import WrittenWord, written_words
from rcqa.types import Example

# verbs a "who" / "which" question asks of a person or body's part in a thing, each of which another could have
# played in the same thing: swapped, the question stays fluent and asks of a part the passage never names
ROLE_VERBS = frozenset({"found", "fund", "design", "build", "paint", "write", "compose", "direct", "produce",
                        "publish", "discover", "invent", "own", "manage", "sponsor", "commission", "restore",
                        "finance", "translate", "edit", "illustrate", "photograph", "record", "perform", "coach",
                        "train", "lead", "rebuild", "repair", "sell", "buy", "inherit", "donate", "demolish"})
ROLE_QUESTION = re.compile(r"\s*(?:who|by whom|which (?:person|company|artist|architect|firm)|when (?:was|were|did))\b",
                           re.IGNORECASE)
VERB_TAGS = frozenset({"VB", "VBD", "VBN", "VBP", "VBZ", "VBG"})
# quantifiers that describe a group without counting it
VAGUE = ("most", "many", "some", "several", "few", "numerous", "countless", "all")
_NUMBER = r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|" \
          r"hundred|thousand|million|dozen|dozens|hundreds|thousands|millions)"
# what "how many" counts that is a measure, not a group: "How many years …" asked of "residents" is no question
MEASURES = frozenset({"times", "years", "months", "weeks", "days", "hours", "minutes", "seconds", "decades",
                      "centuries", "miles", "kilometres", "kilometers", "metres", "meters", "feet", "inches", "acres",
                      "hectares", "tonnes", "tons", "pounds", "dollars", "points", "percent", "degrees", "copies"})
# nouns too general to name a group ("many things", "many others")
GENERIC = frozenset({"things", "ways", "others", "kinds", "types", "sorts", "parts", "forms", "cases", "examples",
                     "aspects", "areas", "instances", "reasons", "factors", "elements", "features"})
# words for people at large: one asked for another is the same count ("How many people …" → "… residents …")
PEOPLE = frozenset({"people", "persons", "residents", "inhabitants", "citizens", "individuals", "humans", "men",
                    "women", "adults", "locals", "natives", "population", "populations"})
MODIFIER_TAGS = frozenset({"JJ", "JJR", "JJS", "NN", "NNP", "VBN", "VBG"})  # "how many seasonal apple pickers"


def role_swap_negative(example: Example, rng: random.Random,
                       tagged: Callable[[str], Sequence[WrittenWord]] = written_words) -> Example | None:
    """In a question asking who played a part or when ("Who designed …", "When was … founded"), its first role verb
    (ROLE_VERBS, not followed by "of": "composed of") whose lemma the passage states, replaced by another role verb,
    drawn with rng, that the passage uses in no form, inflected to the word's tag ("designed"/VBN → "funded")."""
    if not ROLE_QUESTION.match(example.question):
        return None
    words = list(tagged(example.question))
    for word, following in zip(words, [*words[1:], None]):
        base = lemma(word.text, word.tag)
        if (word.tag not in VERB_TAGS or base not in ROLE_VERBS or not _stated(base, example.passage)
                or (following is not None and following.text.lower() == "of")):
            continue
        unused = sorted(verb for verb in ROLE_VERBS - {base}
                        if not _stated(verb, example.passage) and not _stated(verb, example.question))
        if unused:
            swapped = inflected(rng.choice(unused), word.tag)
            return replaced_in_question(example, "role_swap", word.start_char, word.end_char, swapped)
    return None


def vague_quantity_negative(example: Example, rng: random.Random,
                            tagged: Callable[[str], Sequence[WrittenWord]] = written_words) -> Example | None:
    """A "How many <plural noun phrase>" question asked instead of a plural noun the passage describes only with a
    vague quantifier (VAGUE: "most residents") and counts nowhere (no number before it, "9 pickers", "two of the
    pickers"), drawn with rng; None where the question counts nothing or the passage has no such group."""
    asked = _counted_phrase(example.question, tagged)
    if asked is None:
        return None
    people = example.question[slice(*asked)].lower().split()[-1] in PEOPLE
    groups = sorted(group for group in _vague_groups(example.passage, tagged)
                    if not _counted(group, example.passage) and not occurs(group, example.question)
                    and group not in MEASURES | GENERIC and not (people and group in PEOPLE))
    if not groups:
        return None
    return replaced_in_question(example, "vague_quantity", *asked, rng.choice(groups))


def _counted_phrase(question: str, tagged: Callable[[str], Sequence[WrittenWord]]) -> tuple[int, int] | None:
    """The characters of the noun phrase "how many" counts: its modifiers (MODIFIER_TAGS) through its first plural
    noun ("how many apple trees are" → "apple trees"); None without one, or where it counts a measure (MEASURES)."""
    words = list(tagged(question))
    for index in range(len(words) - 2):
        if (words[index].text.lower(), words[index + 1].text.lower()) != ("how", "many"):
            continue
        for end in range(index + 2, len(words)):
            if words[end].tag in ("NNS", "NNPS"):
                of_what = end + 1 < len(words) and words[end + 1].text.lower() == "of"  # "how many types of …"
                measured = words[end].text.lower() in MEASURES or of_what
                return None if measured else (words[index + 2].start_char, words[end].end_char)
            if words[end].tag not in MODIFIER_TAGS:
                return None
    return None


def _vague_groups(passage: str, tagged: Callable[[str], Sequence[WrittenWord]]) -> set[str]:
    """The plural nouns (NNS) the passage writes right after a vague quantifier ("most residents"; "many of the
    pickers")."""
    words = list(tagged(passage))
    groups = set()
    for index, word in enumerate(words):
        if word.text.lower() not in VAGUE:
            continue
        after = words[index + 1:index + 4]
        if len(after) == 3 and after[0].text.lower() == "of" and after[1].text.lower() in ("the", "its", "their"):
            after = after[2:]
        if after and after[0].tag == "NNS" and after[0].text.isalpha():
            groups.add(after[0].text.lower())
    return groups


def _counted(noun: str, passage: str) -> bool:
    """Whether the passage gives a number of the noun anywhere: a number at most two words before it ("9 pickers",
    "1,200 seasonal pickers") or "<number> of the <noun>"."""
    return re.search(rf"\b{_NUMBER}\s+(?:of\s+(?:the|its|their)\s+)?(?:[a-z-]+\s+)?{noun}\b", passage,
                     flags=re.IGNORECASE) is not None


def _stated(verb: str, text: str) -> bool:
    return any(occurs(form, text) for form in forms(verb))
