"""Antonyms of a question's words as written: WordNet 3.0's antonym pointers (the table `antonyms.json`, which
`scripts/wordnet_antonyms.py` writes), reached from an inflected word through its lemma and inflected back to the
word's Penn Treebank tag by LemmInflect ("opened"/VBD → open → close → "closed"; "largest"/JJS → large → small →
"smallest").

WordNet holds no antonyms for prepositions, and reads "most" as "much" (→ "littlest"), so the few such words a
question asks about are listed by hand (HAND_ANTONYMS); a few words that frame a question rather than state what it
asks ("how much", "how old") have none.
"""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from lemminflect import getAllInflections, getInflection, getLemma

TABLE = Path(__file__).with_name("antonyms.json")
HAND_ANTONYMS = {word: other for pair in (("before", "after"), ("above", "below"), ("more", "less"), ("most", "least"))
                 for word, other in (pair, pair[::-1])}
# the part of speech (the table's and LemmInflect's names) of each Penn Treebank tag with antonyms worth asking
TAG_POS = {**dict.fromkeys(("JJ", "JJR", "JJS"), ("adj", "ADJ")),
           **dict.fromkeys(("VB", "VBD", "VBG", "VBN", "VBP", "VBZ"), ("verb", "VERB")),
           **dict.fromkeys(("RB", "RBR", "RBS"), ("adv", "ADV"))}
# words that frame a question rather than state what it asks: verbs ("did", "was", "has": WordNet's antonyms of
# their rare senses, "have" → "lack", would ask nothing the passage contradicts), quantifiers and ages
# a word's antonyms are read from its two most frequent senses only: "pass" (a ship passes the light) is not
# "fail", the antonym of its fourteenth sense (an exam passed); in WordNet 3.0, 87 % of the antonyms' senses rank 1
MAX_SENSE_RANK = 2
# ("How much", "how many": quantities; "how old", "38 years old": an age, which "young" asks again); and antonyms
# WordNet lists that no one would write in their place ("early 2012" → "middle 2012")
FRAMES = frozenset({"be", "do", "have", "get", "make", "go", "take", "call", "use", "say", "give", "know", "stay",
                    "much", "many", "old"})
UNFIT = frozenset({"middle", "androgynous"})


@cache
def antonym_table() -> dict[str, dict[str, list[list[Any]]]]:
    """{part of speech: {lemma: [[antonym, rank of the lemma's sense that holds it], ...]}}, from WordNet 3.0."""
    return json.loads(TABLE.read_text())


def lemma(word: str, tag: str) -> str:
    """The word's lemma for its tag (LemmInflect's; the word itself, lower-cased, where it knows none)."""
    pos = TAG_POS.get(tag)
    found = getLemma(word.lower(), upos=pos[1]) if pos else ()
    return found[0] if found else word.lower()


def forms(lemma_: str) -> set[str]:
    """Every inflection of a lemma that LemmInflect knows, and the lemma itself ("open": opens, opened, opening)."""
    return {lemma_} | {form for inflections in getAllInflections(lemma_).values() for form in inflections}


def antonyms(word: str, tag: str) -> list[str]:
    """The word's antonyms in its MAX_SENSE_RANK most frequent senses, each inflected to the word's tag, the most
    frequent sense's first; one-word ones only (an inflected "break even" reads as no English)."""
    if word.lower() in HAND_ANTONYMS:
        return [HAND_ANTONYMS[word.lower()]]
    pos = TAG_POS.get(tag)
    base = lemma(word, tag)
    if pos is None or base in FRAMES:
        return []
    found = [inflected(antonym, tag) for antonym, rank in antonym_table()[pos[0]].get(base, ())
             if rank <= MAX_SENSE_RANK and antonym.isalpha() and antonym not in UNFIT]
    return list(dict.fromkeys(found))


def inflected(lemma_: str, tag: str) -> str:
    """The lemma in the form of a Penn Treebank tag (LemmInflect's; the lemma itself where it knows none)."""
    if tag in ("JJ", "VB", "RB"):
        return lemma_
    found = getInflection(lemma_, tag=tag)
    return found[0] if found else lemma_
