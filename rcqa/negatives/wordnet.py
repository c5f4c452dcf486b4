"""WordNet 3.0's antonyms, read from its own database files (wndb(5WN): `data.<pos>` lines hold a synset's words and
its pointers; `index.<pos>` lines list a lemma's synsets, most frequent sense first).

An antonym in WordNet is a lexical pointer (`!`) from one word of a synset to one word of another: open (verb, "open
the door") → close, first (adjective) → last, after (adverb) → before. `antonym_table` gathers them per part of
speech, each lemma's antonyms with the rank of the sense that holds them, so that a word is read in its common
senses only ("pass" the lighthouse is not "fail" it, an antonym of its tenth sense). `scripts/wordnet_antonyms.py` runs it over WordNet 3.0 and writes the table rcqa ships
(`antonyms.json` beside this module); nothing reads WordNet at run time.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

POS_FILES = {"adj": "a", "verb": "v", "adv": "r"}  # the parts of speech with antonyms worth asking about
_SATELLITE = "s"  # an adjective satellite lives in data.adj beside the head adjectives ("a")


def _word(token: str) -> str:
    """A word as WordNet writes it, read as text: underscores are spaces, an adjective's syntactic marker goes
    ("galore(ip)" → "galore"), and case is folded (the table is looked up by lower-cased words)."""
    return token.split("(", 1)[0].replace("_", " ").lower()


def synset_words_and_antonyms(line: str) -> tuple[str, list[str], list[tuple[int, str, int]]]:
    """One data.<pos> line: (its offset, its words, and its antonym pointers as (source word index, target
    offset, target word index), indices counting from 1 as WordNet's do)."""
    fields = line.split(" | ", 1)[0].split()
    offset, word_count = fields[0], int(fields[3], 16)
    words = [_word(fields[4 + 2 * i]) for i in range(word_count)]
    at = 4 + 2 * word_count
    pointer_count, at = int(fields[at]), at + 1
    antonyms = []
    for _ in range(pointer_count):
        symbol, target, _pos, source_target = fields[at:at + 4]
        at += 4
        if symbol == "!":
            antonyms.append((int(source_target[:2], 16), target, int(source_target[2:], 16)))
    return offset, words, antonyms


def antonym_table(data_lines: Iterable[str], index_lines: Iterable[str]) -> dict[str, list[list]]:
    """Each lemma's antonyms for one part of speech (its data and index files' lines, licence header and all), each
    once as [antonym, the rank of the lemma's sense that holds it (1: its most frequent sense)], in that order."""
    synsets = {}
    for line in data_lines:
        if line.startswith(" "):  # the licence header
            continue
        offset, words, antonyms = synset_words_and_antonyms(line)
        synsets[offset] = (words, antonyms)
    by_synset = {offset: [(words[source - 1], target, index) for source, target, index in antonyms]
                 for offset, (words, antonyms) in synsets.items() if antonyms}
    table: dict[str, list[list[Any]]] = {}  # [antonym, sense rank] pairs, as the JSON file holds them
    for line in index_lines:
        if line.startswith(" "):
            continue
        lemma, offsets = _index_entry(line)
        found: dict[str, int] = {}
        for rank, offset in enumerate(offsets, start=1):
            for source, target, index in by_synset.get(offset, ()):
                if source == lemma:
                    found.setdefault(_word(synsets[target][0][index - 1]), rank)
        if found:
            table[lemma] = [[antonym, rank] for antonym, rank in found.items()]
    return table


def _index_entry(line: str) -> tuple[str, list[str]]:
    """An index.<pos> line's lemma and its synsets' offsets, most frequent sense first."""
    fields = line.split()
    pointer_count = int(fields[3])
    synset_count = int(fields[2])
    return _word(fields[0]), fields[6 + pointer_count:6 + pointer_count + synset_count]


def antonym_tables(files: Mapping[str, tuple[Iterable[str], Iterable[str]]]) -> dict[str, dict[str, list[list]]]:
    """{part of speech: antonym_table} for each (data lines, index lines) pair given by part of speech."""
    return {pos: antonym_table(data, index) for pos, (data, index) in files.items()}
