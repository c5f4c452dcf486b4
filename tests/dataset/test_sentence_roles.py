"""The paper's layer roles by sentence over a run (rcqa.dataset.sentence_roles): each role's share worked out by hand
on a small passage, the questions it cannot read by sentence left out with their reason, the top sentence agreeing
question by question with the plausibility analysis' own (computed from the explanation's tokens, not the rows), and
docs/findings.md's table regenerated from the committed rows."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from rcqa.dataset.sentence_roles import BEGIN, END, run_sentence_roles, section, sentence_roles

ROOT = Path(__file__).resolve().parents[2]
RUNS = {"Integrated Gradients": ROOT / "reports/plausibility/squad-dev-1000-ig",
        "AttnLRP": ROOT / "reports/plausibility/squad-dev-1000-attnlrp",
        "Gradient × activation": ROOT / "reports/plausibility/squad-dev-1000-gradxact"}
PASSAGE = "The cat sat on the mat. The dog ran home at noon. A bird sang in the garden."
WORDS = ["The", "cat", "sat", "on", "the", "mat", ".", "The", "dog", "ran", "home", "at", "noon", ".", "A", "bird",
         "sang", "in", "the", "garden", "."]


def test_each_roles_share_is_its_sentences_words_worked_out_by_hand():
    distribution = np.zeros((2, len(WORDS)))
    distribution[0, [1, 5]] = 0.1, 0.1  # the first sentence: 0.2
    distribution[0, [8, 12]] = 0.2, 0.3  # the answer's, "noon": 0.5
    distribution[0, [15, 19]] = 0.2, 0.1  # the third, sharing "garden" with the question: 0.3
    distribution[1, [1, 12, 19]] = 0.6, 0.3, 0.1
    found = sentence_roles(PASSAGE, "When did the dog leave the garden?", "noon", WORDS, distribution)
    np.testing.assert_allclose(found["answer_sentence"], [0.5, 0.3])
    np.testing.assert_allclose(found["question_sentences"], [0.3, 0.1])  # "dog" is the answer's sentence's own
    np.testing.assert_allclose(found["other_sentences"], [0.2, 0.6])
    np.testing.assert_allclose(found["top_is_answer"], [1.0, 0.0])


def test_a_question_it_cannot_read_by_sentence_says_why():
    flat = np.full((1, len(WORDS)), 1 / len(WORDS))
    assert sentence_roles(PASSAGE, "Who?", "The", WORDS, flat) == "explained span absent or repeated"
    assert sentence_roles(PASSAGE, "Who?", "noon", ["noon", "cat"], flat[:, :2]) == "a word not found in order"


@pytest.mark.slow
def test_the_top_sentence_agrees_question_by_question_with_the_plausibility_analysis():
    """The plausibility columns were computed from each explanation's tokens when the run was made; the roles read
    the rows' word shares. Over the questions both read, the layer's top sentence holds the span in both or neither."""
    run = RUNS["Integrated Gradients"]
    table = pq.ParquetDataset(sorted((run / "shards").glob("*.parquet"))).read().sort_by("id").to_pylist()
    compared = agreed = 0
    for row in table:
        if row["n_windows"] != 1:
            continue
        found = sentence_roles(row["passage"], row["question"], row["explained_span"], row["passage_words"],
                               np.array(row["distribution"], dtype=float))
        if isinstance(found, str):
            continue
        for ours, theirs in zip(found["top_is_answer"], row["plausibility_magnitude_top1_sentence"]):
            if theirs is not None:
                compared += 1
                agreed += ours == theirs
    assert compared > 6000 and agreed / compared > 0.995, (agreed, compared)


@pytest.mark.slow
def test_the_findings_table_is_the_committed_rows():
    shown = (ROOT / "docs/findings.md").read_text().split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == section(RUNS).strip()
    text = " ".join((ROOT / "docs/findings.md").read_text().split())
    tops = []
    for label, run in RUNS.items():
        found = run_sentence_roles(run)
        answer = [layer["mean"] for layer in found["answer_sentence"]]
        asked = [layer["mean"] for layer in found["question_sentences"]]
        assert (f"{label}: {100 * answer[0]:.1f} % at the embeddings, {100 * answer[-1]:.1f} % at the last block; "
                f"sentences sharing a question word {100 * asked[0]:.1f} % → {100 * asked[-1]:.1f} %") in text
        # "every method moves attribution onto the answer's sentence as the layers go up, and off the sentences
        # that share the question's words": layer after layer, for each
        assert np.all(np.diff(answer) > 0) and np.all(np.diff(asked) < 0), label
        tops += [layer["mean"] for layer in found["top_is_answer"]]
    assert f"at nearly every layer ({100 * min(tops):.0f}–{100 * max(tops):.0f} %)" in text
