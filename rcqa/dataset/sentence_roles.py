"""The paper's layer roles by sentence over a run (issue 55): at every layer, the share of the layer's attribution over
the passage (the rows' `distribution`, the paper's I_l) on the sentence holding the explained span, on the other
sentences that share a word with the question, and on the rest; and how often the layer rests most on the answer's
sentence. Read from the rows, so no question is explained again: a row written by this version keeps each layer's
sentence scores (rcqa.dataset.rows.sentence_columns, the explanation's tokens summed by sentence), and those are read
where present; a row written before them keeps each question's per-word shares, which are summed by sentence instead.
One function (summarize_sentences) makes the table from either, for the report, the Dataset page and the findings.
Reading word shares is the heavy part (the drill-down columns and a spaCy parse a passage), so the page never does it:
the summary kept with a run holds the section over all its rows (rcqa.dataset.kept_summary.with_word_shares).

Where only the word shares are kept, a word's sentence is found by its characters: the rows keep the words as
written, in order, so each is found in the passage after the one before. That holds for a passage read in one window;
a question whose passage took several, or whose explained span occurs more than once in it (which occurrence was
explained is not kept), is left out and counted. The sentence scores have neither limit. Their shares count every
token of the sentence, its punctuation too, where `distribution` leaves punctuation out. Question words are the
question's words (letters and digits) lowercased, the stopwords the word-level roles leave out left out here too
(rcqa.analysis.roles.categories)."""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rcqa.analysis.roles.categories import STOPWORDS, normalise
from rcqa.dataset import store
from rcqa.dataset.rows import SENTENCE_COLUMNS
from rcqa.intervals import excludes_zero, mean_with_interval
from rcqa.text import segments, sentences_of

NAMES = {"answer_sentence": "the answer's sentence", "question_sentences": "sentences sharing a question word",
         "other_sentences": "the other sentences", "top_is_answer": "the top sentence is the answer's"}
# what a row's roles are read from: its sentence scores, else its word shares
COLUMNS = ["id", "passage", "question", "explained_span", "passage_words", "distribution", "n_windows",
           *SENTENCE_COLUMNS]
WORD = re.compile(r"\w+")
BATCH = 500  # rows made Python objects at once when a run's word shares are read
# why a row is left out when it holds neither its sentence scores nor the word shares and passage to read them from
UNREAD = "rows written before sentence scores were kept"
NEEDS_RUN = ("The sentence section needs a run made with this version of rcqa (python -m rcqa reproduce), whose rows "
             "keep each layer's sentence scores: this run's rows keep none.")
# why the Dataset page shows no section for an older run that has one: its word shares are read over all its rows
# only, where its summary is kept (a spaCy parse a passage: 36 s for the 10,570-question run), never on the page
UNDER_FILTER = ("This run's rows keep no sentence scores, and their word shares are read by sentence over all of its "
                "questions only, once, as its summary is kept: set every filter to any to see that section.")
NOT_KEPT = ("This run's rows keep no sentence scores, and their word shares are read by sentence only as its summary "
            "is kept, and the summary it keeps was made from other rows or code than today's: `python -m rcqa report` "
            "reads them, and docs/datasets.md says how to keep the summary again.")
# the one reason a row that keeps its sentence scores is left out (row_roles), so the only one a selection of such
# rows can have when none of them is read
NONE_READ = ("None of these questions can be read by sentence: the explained span of each lies in no sentence of its "
             "passage's window (an abstention explains no span).")


def roles_of(by_sentence: np.ndarray, answer: int, question: str, texts: list[str]) -> dict[str, np.ndarray]:
    """Per layer (by_sentence: layers × the passage's sentences, each sentence's share; texts: each one's text), each
    role's share, and whether the sentence with the largest share is the answer's (1 or 0)."""
    asked = {normalise(w) for w in WORD.findall(question)} - STOPWORDS
    sharing = np.array([n != answer and bool(asked & {normalise(w) for w in WORD.findall(text)})
                        for n, text in enumerate(texts)], dtype=bool)
    return {"answer_sentence": by_sentence[:, answer], "question_sentences": by_sentence[:, sharing].sum(axis=1),
            "other_sentences": by_sentence[:, ~sharing].sum(axis=1) - by_sentence[:, answer],
            "top_is_answer": (np.argmax(by_sentence, axis=1) == answer).astype(float)}


Sentences = tuple[tuple[int, int], ...]


def sentence_roles(passage: str, question: str, explained_span: str, words: list[str], distribution: np.ndarray,
                   read: Callable[[str], Sentences] | None = None) -> dict[str, np.ndarray] | str:
    """The roles (roles_of) from a row's word shares (distribution: layers × the passage's words), its words found in
    the passage by their characters (its sentences by `read`, spaCy's by default); a sentence why not where the
    question cannot be read by sentence."""
    if passage.count(explained_span) != 1 or not explained_span:
        return "explained span absent or repeated"
    starts, cursor = [], 0
    for word in words:
        found = passage.find(word, cursor)
        if found < 0:
            return "a word not found in order"
        starts.append(found)
        cursor = found + len(word)
    sentences = (read or _sentences)(passage)
    begins = [a for a, _ in sentences]
    # a word's sentence: the last to begin at or before it (whitespace between sentences belongs to none)
    of_word = np.clip(np.searchsorted(begins, starts, side="right") - 1, 0, None)
    by_sentence = np.stack([distribution[:, of_word == n].sum(axis=1) for n in range(len(sentences))], axis=1)
    answer = max(int(np.searchsorted(begins, passage.index(explained_span), side="right")) - 1, 0)
    return roles_of(by_sentence, answer, question, [passage[a:b] for a, b in sentences])


@functools.lru_cache(maxsize=64)
def _sentences(passage: str) -> Sentences:
    """spaCy's sentences of a passage, parsed once for its questions (a run's rows keep a passage's together)."""
    return segments(passage).sentences


def row_roles(row: dict, read: Callable[[str], Sentences] | None = None) -> dict[str, np.ndarray] | str:
    """A row's roles: from its sentence scores (rcqa.dataset.rows.sentence_columns) where it holds them, else from its
    word shares where the row holds them and read its passage in one window; else why not."""
    if row.get("sentence_share") is not None:
        if row["sentence_explained"] is None:
            return "explained span in no sentence of the window"
        texts = [row["passage"][a:b] for a, b in zip(row["sentence_starts"], row["sentence_ends"])]
        return roles_of(np.array(row["sentence_share"], dtype=float), row["sentence_explained"], row["question"],
                        texts)
    if row.get("distribution") is None or row.get("passage") is None:
        return UNREAD
    if row["n_windows"] != 1:
        return "passage read in several windows"
    return sentence_roles(row["passage"], row["question"], row["explained_span"], row["passage_words"],
                          np.array(row["distribution"], dtype=float), read)


def summarize_sentences(rows: Iterable[dict], seed: int = 0,
                        read: Callable[[str], Sentences] | None = None) -> dict | None:
    """The section's table over the rows: per role (NAMES) and layer, the mean with its 95 % bootstrap interval
    (rcqa.intervals); the questions read, and by reason those left out; None where no row could be read. `read` gives
    a passage's sentences where a row's word shares are read (spaCy's, parsed a passage at a time, by default)."""
    found: dict[str, list[np.ndarray]] = {name: [] for name in NAMES}
    left_out: dict[str, int] = {}
    stored = 0
    for row in rows:
        roles = row_roles(row, read)
        if isinstance(roles, str):
            left_out[roles] = left_out.get(roles, 0) + 1
            continue
        stored += row.get("sentence_share") is not None
        for name in NAMES:
            found[name].append(roles[name])
    if not found["top_is_answer"]:
        return None
    by_layer = {name: np.array(values) for name, values in found.items()}  # questions × layers
    return {"questions": len(found["top_is_answer"]), "from_sentence_scores": stored, "left_out": left_out,
            **{name: [mean_with_interval(layer, seed) for layer in values.T] for name, values in by_layer.items()},
            # the last layer minus the first, question by question: what says whether a share rises or falls
            "change": {name: mean_with_interval(values[:, -1] - values[:, 0], seed)
                       for name, values in by_layer.items()}}


def run_sentence_roles(folder: str | Path, seed: int = 0) -> dict | None:
    """summarize_sentences over every row of the run in `folder`, its word shares read where its rows hold no
    sentence scores (rows written before them); shards that cannot be read are skipped, as load_run skips them."""
    tables = []
    for shard in sorted((Path(folder) / store.SHARDS).glob("*.parquet")):
        try:
            names = pq.read_schema(shard).names
            tables.append(pq.read_table(shard, columns=[c for c in COLUMNS if c in names]))
        except (OSError, pa.ArrowException):
            continue
    if not tables:
        return None
    rows = pa.concat_tables(tables, promote_options="default").sort_by("id")
    passages = _passages_read_by_word(rows)
    parsed = dict(zip(passages, sentences_of(passages)))  # in batches, each passage once: half the time one by one
    # as Python objects a batch at a time: the 10,570-question run's word shares all at once peaked at 1.7 GB, batched 1.3
    return summarize_sentences((row for batch in rows.to_batches(max_chunksize=BATCH) for row in batch.to_pylist()),
                               seed, parsed.__getitem__)


def _passages_read_by_word(rows: pa.Table) -> list[str]:
    """The distinct passages of the rows that keep no sentence scores (row_roles reads their word shares instead)."""
    if "passage" not in rows.column_names:
        return []
    if "sentence_share" in rows.column_names:
        rows = rows.filter(pc.is_null(rows["sentence_share"]))
    return [passage for passage in rows["passage"].unique().to_pylist() if passage]


def sentences_statement(found: dict, layers: list[str]) -> str:
    """The section's sentence, every number and word of it read from `found` (summarize_sentences): each share at the
    first and the last layer, whether it rises or falls between them (the paired difference, question by question,
    told apart where its 95 % interval excludes 0: rcqa.intervals.excludes_zero), and how often the top sentence is
    the answer's."""
    def change(name: str) -> str:
        paired = found["change"][name]
        if not excludes_zero(paired["low"], paired["high"]):
            return "not told apart, question by question"
        return (f"a {'rise' if paired['mean'] > 0 else 'fall'} of {100 * paired['mean']:+.1f} "
                f"[{100 * paired['low']:+.1f}, {100 * paired['high']:+.1f}] points, question by question")

    def move(name: str) -> str:
        return (f"{100 * found[name][0]['mean']:.1f} % at {layers[0]} and {100 * found[name][-1]['mean']:.1f} % at "
                f"{layers[-1]} ({change(name)})")

    return (f"Over {found['questions']:,} questions, the share of each layer's attribution over the passage on the "
            f"answer's sentence is {move('answer_sentence')}, on sentences sharing a question word "
            f"{move('question_sentences')}, on the other sentences {move('other_sentences')}; the top sentence is the "
            f"answer's on {100 * found['top_is_answer'][0]['mean']:.1f} % of questions at {layers[0]} and "
            f"{100 * found['top_is_answer'][-1]['mean']:.1f} % at {layers[-1]}.")


def sentences_source(found: dict) -> str:
    """Where the section's numbers come from, in one sentence read from `found` (summarize_sentences): of how many
    questions, how many were read from their rows' sentence scores and how many from their word shares, and how many
    were left out, by reason."""
    scores = found.get("from_sentence_scores", 0)
    shares = found["questions"] - scores
    from_scores = "from the sentence scores their rows keep"
    from_shares = "from their word shares summed by sentence (rows written before sentence scores were kept)"
    read = (f"{scores:,} {from_scores} and {shares:,} {from_shares}" if scores and shares
            else f"all {from_scores if scores else from_shares}")
    left = sum(found["left_out"].values())
    reasons = ", ".join(f"{count:,} ({reason})" for reason, count in sorted(found["left_out"].items()))
    return (f"Of {found['questions'] + left:,} questions, {found['questions']:,} are read by sentence, {read}"
            + (f"; {left:,} {'is' if left == 1 else 'are'} left out: {reasons}." if left else "."))


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

    summaries = {label: _read(folder) for label, folder in runs.items()}
    counts = "; ".join(f"{label}: {found['questions']} questions read, " + ", ".join(
        f"{count} left out ({reason})" for reason, count in sorted(found["left_out"].items())) for label, found in
        summaries.items())
    return "\n\n".join([f"Share of each layer's attribution over the passage, % (95 % bootstrap interval). {counts}.",
                        roles_table(summaries, run_layers(next(iter(runs.values()))))])


def _read(folder: str | Path) -> dict:
    if (found := run_sentence_roles(folder)) is None:
        raise ValueError(f"{folder}: {NEEDS_RUN}")
    return found


def main(argv: list[str] | None = None) -> None:
    """python -m rcqa.dataset.sentence_roles LABEL=RUN ... [--write FILE]: the table, printed, or written into FILE
    between its sentence-roles markers."""
    from rcqa.dataset.plausibility import tables_main

    tables_main(argv, "python -m rcqa.dataset.sentence_roles", section, BEGIN, END)

if __name__ == "__main__":
    main()
