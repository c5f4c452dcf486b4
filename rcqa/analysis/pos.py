"""The parts of speech a layer's top words are (the paper's analysis 3), from the words' Penn Treebank tags."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rcqa.analysis.registry import Analysis, Inputs, json_list
from rcqa.analysis.roles.categories import explained_span_mask
from rcqa.analysis.roles.shares import shares_of_top
from rcqa.analysis.words import top_k
from rcqa.types import Attribution, Word

# the paper's groups of tags; a tag in none of them (FW, SYM, XX, ...) is "other"
POS_GROUPS = {
    "entity": frozenset({"CD", "NN", "NNP", "NNPS", "NNS", "PRP", "PRP$"}),
    "verb": frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"}),
    "adjective": frozenset({"JJ", "JJR", "JJS"}),
    "adverb": frozenset({"RB", "RBR", "RBS"}),
    "function": frozenset({"CC", "DT", "EX", "IN", "LS", "MD", "PDT", "POS", "RP", "TO", "UH", "WDT", "WP", "WP$",
                           "WRB"}),
}
GROUPS = (*POS_GROUPS, "punctuation", "other")
# what each group holds, as a chart names it: the paper's "entity" holds common nouns, pronouns and numbers too, not
# only named entities (the key stays "entity" in stored runs, which the paper's numbers are compared with)
GROUP_NAMES = {"entity": "noun, pronoun or number", "verb": "verb", "adjective": "adjective", "adverb": "adverb",
               "function": "function word", "punctuation": "punctuation", "other": "other"}


def pos_group(word: Word) -> str:
    """The word's group: its tag's, or 'punctuation' (which the analyses never count as a word)."""
    if word.is_punctuation:
        return "punctuation"
    return next((group for group, tags in POS_GROUPS.items() if word.tag in tags), "other")


def _group_masks(words: list[Word]) -> dict[str, np.ndarray]:
    groups = np.array([pos_group(w) for w in words])
    return {group: groups == group for group in GROUPS}


def pos_shares(result: Attribution, distribution: np.ndarray, k: int = 5) -> dict[str, np.ndarray]:
    """Per layer, the % of its top-k passage words in each part-of-speech group; NaN where a layer has none."""
    top = top_k(distribution, k)
    return {group: shares_of_top(top, mask) for group, mask in _group_masks(result.passage_words()).items()}


def answer_pos(result: Attribution, target: int = 0) -> dict[str, float] | None:
    """The % of the explained span's words in each group (the paper: answer spans are ~82 % entities); None if the
    span holds no word."""
    inside = explained_span_mask(result, target)
    words = [w for w, chosen in zip(result.passage_words(), inside) if chosen]
    if not words:
        return None
    return {group: 100 * float(mask.mean()) for group, mask in _group_masks(words).items()}


@dataclass(frozen=True)
class PosShares:
    """Per group, the % of each layer's top-k words in it (None where a layer has no top word), and the explained
    span's own mix (None if it holds no word)."""

    pos: dict[str, list]
    answer_pos: dict[str, float] | None

    def to_dict(self) -> dict:
        return {"pos": self.pos, "answer_pos": self.answer_pos}

    @classmethod
    def from_dict(cls, document: dict) -> PosShares:
        return cls(document["pos"], document["answer_pos"])

    def row(self) -> dict:
        return {**{f"pos_{group}": self.pos[group] for group in GROUPS}, "answer_pos": self.answer_pos}


def pos_of_top(inputs: Inputs) -> PosShares:
    shares = pos_shares(inputs.result, inputs.distribution, inputs.k)
    return PosShares({group: json_list(values, 2) for group, values in shares.items()},
                     answer_pos(inputs.result, inputs.target))


POS = Analysis("pos", "Parts of speech of each layer's top words", "the parts of speech of each layer's top-k words, and of the explained span", pos_of_top,
               PosShares, {**{f"pos_{group}": "per_layer" for group in GROUPS}, "answer_pos": GROUPS})
