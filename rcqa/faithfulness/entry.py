"""A compared entry: one method under one of its rankings (AttnLRP signed, IG magnitude; random is one entry of its
own). Comparisons, sanity checks and dataset runs key their numbers by an entry's name ("attnlrp:signed"), which JSON
keeps; Entry.named reads such a name back, the one place one is taken apart."""
from __future__ import annotations

from dataclasses import dataclass

from rcqa.attribution.methods import METHODS
from rcqa.attribution.methods.random_baseline import RandomBaseline


@dataclass(frozen=True)
class Entry:
    method: str  # a name of rcqa.attribution.methods.METHODS
    ranking: str  # one of the method's rankings: signed, magnitude; random's own is random

    @classmethod
    def named(cls, name: str) -> Entry:
        """The entry a saved name stands for; a method saved before it was ranked both ways, by its name alone, is
        read with the one ranking it had then (comparisons saved then still load)."""
        method, _, ranking = name.partition(":")
        return cls(method, ranking or _ranking_before_both(method))

    @property
    def name(self) -> str:
        return self.method if self.method == RandomBaseline.name else f"{self.method}:{self.ranking}"

    @property
    def label(self) -> str:
        """As a page names it: "AttnLRP, signed"; random by its label alone."""
        found = METHODS.get(self.method)
        shown = found.label if found else self.method
        return shown if self.method == RandomBaseline.name else f"{shown}, {self.ranking}"


def entry_label(name: str) -> str:
    """The label of the entry a saved name stands for (Entry.named(name).label)."""
    return Entry.named(name).label


def _ranking_before_both(method: str) -> str:
    found = METHODS.get(method)
    return found.ranking_before_both if found else "magnitude"
