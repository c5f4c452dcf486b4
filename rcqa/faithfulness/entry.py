"""A compared entry: one method under one of its rankings (AttnLRP signed, IG magnitude; random is one entry of its
own). Inside, comparisons and sanity checks hold entries as Entry values; a document (JSON) keys its numbers by an
entry's name ("attnlrp:signed"), and Entry.parse reads a name back where one comes in (a saved comparison, a run's
rows, a command line), by looking it up among the entries the registered methods have: no name is taken apart."""
from __future__ import annotations

from dataclasses import dataclass

from rcqa.attribution.methods import METHODS, RANDOM


@dataclass(frozen=True)
class Entry:
    method: str  # a name of rcqa.attribution.methods.METHODS
    ranking: str  # one of the method's rankings: signed, magnitude; random's own is random

    @classmethod
    def parse(cls, name: str) -> Entry:
        """The entry a name stands for: a method's under one of its rankings, or a method's name alone for the one
        ranking it had before each method was ranked both ways (comparisons saved then still load; random's only).
        ValueError, in one sentence, for any other name."""
        known = every_entry()
        if name not in known:
            current = dict.fromkeys(entry.name for entry in known.values())
            raise ValueError(f"unknown method or ranking {str(name)[:60]!r}; choose from {', '.join(current)}")
        return known[name]

    @property
    def name(self) -> str:
        return self.method if self.method == RANDOM else f"{self.method}:{self.ranking}"

    @property
    def label(self) -> str:
        """As a page names it: "AttnLRP, signed"; random by its label alone; a method no longer registered (one a
        caller registered for a while) by its name."""
        found = METHODS.get(self.method)
        shown = found.label if found else self.method
        return shown if self.method == RANDOM else f"{shown}, {self.ranking}"


def every_entry() -> dict[str, Entry]:
    """Every name an entry may be read from, with its entry: each registered method under each of its rankings, and
    under its name alone."""
    found = {method.name: Entry(method.name, method.ranking_before_both) for method in METHODS.values()}
    for method in METHODS.values():
        found.update({entry.name: entry for entry in (Entry(method.name, ranking) for ranking in method.rankings)})
    return found


def entry_label(name: str) -> str:
    """The label of the entry a document's name stands for (Entry.parse(name).label)."""
    return Entry.parse(name).label
