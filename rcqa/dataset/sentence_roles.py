"""The paper's layer roles by sentence over a run (issue 55): at every layer, the share of the layer's attribution over
the passage (the rows' `distribution`, the paper's I_l) on the sentence holding the explained span, on the other
sentences that share a word with the question, and on the rest; and how often the layer rests most on the answer's
sentence. Read from the committed rows, which keep each question's per-word shares, so no question is explained again.

A word's sentence is found by its characters: the rows keep the words as written, in order, so each is found in the
passage after the one before. That holds for a passage read in one window; a question whose passage took several,
or whose explained span occurs more than once in it (which occurrence was explained is not kept), is left out and
counted. Question words are the question's words (letters and digits) lowercased, the stopwords the word-level roles
leave out left out here too (rcqa.analysis.roles.categories)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from rcqa.analysis.roles.categories import STOPWORDS, normalise
from rcqa.dataset import store
from rcqa.intervals import mean_with_interval
from rcqa.text import segments

ROLES = ("answer_sentence", "question_sentences", "other_sentences")
NAMES = {"answer_sentence": "the answer's sentence", "question_sentences": "sentences sharing a question word",
         "other_sentences": "the other sentences", "top_is_answer": "the top sentence is the answer's"}
COLUMNS = ["id", "passage", "question", "explained_span", "passage_words", "distribution", "n_windows"]
WORD = re.compile(r"\w+")


def sentence_roles(passage: str, question: str, explained_span: str, words: list[str],
                   distribution: np.ndarray) -> dict[str, np.ndarray] | str:
    """Per layer (distribution: layers × the passage's words): each role's share, and whether the sentence with the
    largest share is the answer's (1 or 0). A sentence why not where the question cannot be read by sentence."""
    if passage.count(explained_span) != 1 or not explained_span:
        return "explained span absent or repeated"
    starts, cursor = [], 0
    for word in words:
        found = passage.find(word, cursor)
        if found < 0:
            return "a word not found in order"
        starts.append(found)
        cursor = found + len(word)
    sentences = segments(passage).sentences
    begins = [a for a, _ in sentences]
    # a word's sentence: the last to begin at or before it (whitespace between sentences belongs to none)
    of_word = np.clip(np.searchsorted(begins, starts, side="right") - 1, 0, None)
    by_sentence = np.stack([distribution[:, of_word == n].sum(axis=1) for n in range(len(sentences))], axis=1)
    span_start = passage.index(explained_span)
    answer = max(int(np.searchsorted(begins, span_start, side="right")) - 1, 0)
    asked = {normalise(w) for w in WORD.findall(question)} - STOPWORDS
    sharing = np.array([n != answer and bool(asked & {normalise(w) for w in WORD.findall(passage[a:b])})
                        for n, (a, b) in enumerate(sentences)])
    return {"answer_sentence": by_sentence[:, answer], "question_sentences": by_sentence[:, sharing].sum(axis=1),
            "other_sentences": by_sentence[:, ~sharing].sum(axis=1) - by_sentence[:, answer],
            "top_is_answer": (np.argmax(by_sentence, axis=1) == answer).astype(float)}


def run_sentence_roles(folder: str | Path, seed: int = 0) -> dict:
    """Over the run's questions read in one window: per role and layer, the mean with its interval; the questions
    read and, by reason, those left out."""
    table = pq.ParquetDataset(sorted((Path(folder) / store.SHARDS).glob("*.parquet"))).read(columns=COLUMNS)
    found: dict[str, list[np.ndarray]] = {name: [] for name in NAMES}
    left_out: dict[str, int] = {}
    for row in table.sort_by("id").to_pylist():
        roles = ("passage read in several windows" if row["n_windows"] != 1 else
                 sentence_roles(row["passage"], row["question"], row["explained_span"], row["passage_words"],
                                np.array(row["distribution"], dtype=float)))
        if isinstance(roles, str):
            left_out[roles] = left_out.get(roles, 0) + 1
            continue
        for name in NAMES:
            found[name].append(roles[name])
    return {"questions": len(found["top_is_answer"]), "left_out": left_out,
            **{name: [mean_with_interval(layer, seed) for layer in np.array(values).T] for name, values in found.items()}}


def roles_table(summaries: dict[str, dict], layers: list[str]) -> str:
    """A markdown table: per run (by its label) and role, the mean share (%) at every layer with its interval."""
    lines = ["| method | role | " + " | ".join(layers) + " |", "|" + "---|" * (len(layers) + 2)]
    for label, found in summaries.items():
        for name, called in NAMES.items():
            lines.append(f"| {label} | {called} | " + " | ".join(
                f"{100 * v['mean']:.1f} [{100 * v['low']:.1f}, {100 * v['high']:.1f}]" for v in found[name]) + " |")
    return "\n".join(lines)


BEGIN, END = "<!-- sentence-roles:begin -->", "<!-- sentence-roles:end -->"


def section(runs: dict[str, str | Path]) -> str:
    """The findings' table, with how many questions each run gives and why the rest are left out."""
    from rcqa.dataset.plausibility import run_layers

    summaries = {label: run_sentence_roles(folder) for label, folder in runs.items()}
    counts = "; ".join(f"{label}: {found['questions']} questions read, " + ", ".join(
        f"{count} left out ({reason})" for reason, count in sorted(found["left_out"].items())) for label, found in
        summaries.items())
    return "\n\n".join([f"Share of each layer's attribution over the passage, % (95 % bootstrap interval). {counts}.",
                        roles_table(summaries, run_layers(next(iter(runs.values()))))])


def main(argv: list[str] | None = None) -> None:
    """python -m rcqa.dataset.sentence_roles LABEL=RUN ... [--write FILE]: the table, printed, or written into FILE
    between its sentence-roles markers."""
    from rcqa.dataset.plausibility import tables_main

    tables_main(argv, "python -m rcqa.dataset.sentence_roles", section, BEGIN, END)

if __name__ == "__main__":
    main()
