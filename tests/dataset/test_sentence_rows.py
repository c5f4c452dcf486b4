"""A run's rows keep each layer's sentence scores (rcqa.dataset.rows.sentence_columns): a hand-made explanation's
shares worked out on paper with its gold and predicted sentences, a real explanation's shares equal to its token
scores summed by spaCy's sentences at every layer (conservation, read from the tokens' characters, not through the
granularity code), and the run-level table (rcqa.dataset.sentence_roles.summarize_sentences) read from those columns,
worked out by hand, with the sentence the report and the page write read against it."""
from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from rcqa.dataset.aggregate import load_run, summarize
from rcqa.dataset.kept_summary import keep_summary
from rcqa.dataset.report import write
from rcqa.dataset.rows import example_row, sentence_columns
from rcqa.dataset.sentence_roles import NEEDS_RUN, sentences_statement, summarize_sentences
from rcqa.gallery import gallery_example
from rcqa.text import segments
from rcqa.types import ExplainSettings, GoldAnswer
from tests.helpers.hand_runs import HAND_ROWS, WORD_SHARE_ROWS, write_run
from tests.helpers.handmade import handmade
from tests.helpers.orchard import PASSAGE, QUESTION, QUESTION_TEXT, SIX_HUNDRED

ROOT = Path(__file__).resolve().parents[2]
FOURTEEN = 3  # "14", in the orchard passage's first sentence
KEPT = 0.5e-4 + 1e-7  # a share's rounding to the 4 decimals a row keeps (rows.SHARE_DECIMALS), and float32's


def orchard(**changes):
    """The orchard passage explained on "600" (its second sentence) while the model predicted "14" (its first),
    with "600" as the gold answer."""
    result = handmade(QUESTION, PASSAGE, explained=(SIX_HUNDRED, SIX_HUNDRED), predicted=(FOURTEEN, FOURTEEN),
                      question_text=QUESTION_TEXT)
    passage = result.example.passage
    example = replace(result.example, answers=(GoldAnswer("600", passage.index("600")),))
    return replace(result, example=example, **changes)


def test_a_rows_sentence_shares_and_sentences_worked_out_by_hand():
    result = orchard()
    passage = result.example.passage
    assert passage.startswith("The farm has 14 fields . Of its 2,300 trees")
    found = sentence_columns(result, "l2")
    # spaCy's two sentences: "The farm has 14 fields ." and "Of its 2,300 trees , ... plums ."
    assert [passage[a:b] for a, b in zip(found["sentence_starts"], found["sentence_ends"])] == [
        "The farm has 14 fields .", "Of its 2,300 trees , 600 are pear trees , and 250 are plums ."]
    # per layer, the first sentence's words: has 2, 14 2 (block 0), "." 9 (block 1); the second's: 2,300 1, trees
    # 5 + 1.5, "," 100 + 7, 600 6, pear 4, trees 3, "," 50, 250 3; punctuation counts, as its tokens do
    expected = [[2 / 115, 113 / 115], [2 / 62.5, 60.5 / 62.5], [9 / 16, 7 / 16]]
    np.testing.assert_allclose(found["sentence_share"], expected, atol=KEPT)
    np.testing.assert_allclose(found["sentence_signed"], expected, atol=KEPT)  # every score is positive here
    assert (found["sentence_explained"], found["sentence_predicted"], found["sentence_gold"]) == (1, 0, 1)
    # no gold answer, and a gold answer outside the window's sentences: null
    assert sentence_columns(replace(result, example=replace(result.example, answers=())), "l2")["sentence_gold"] is None
    row = example_row(result, "l2", 5)
    assert row["sentence_gold"] == 1 and len(row["sentence_share"]) == len(result.layers)


def test_the_signed_shares_keep_the_sign_and_divide_by_the_magnitudes():
    result = orchard()
    scores = result.scores.copy()
    signed = ["l2", "sum", "abs_sum", "l2_squared"].index("sum")
    first_sentence = [w.tokens[0] for w in result.words if w.segment == "passage" and w.start_char < 24]
    scores[0, signed][:, first_sentence] *= -1  # the first sentence's scores turned negative under "sum" only
    found = sentence_columns(replace(result, scores=scores), "l2")
    np.testing.assert_allclose(found["sentence_signed"], [[-2 / 115, 113 / 115], [-2 / 62.5, 60.5 / 62.5],
                                                          [-9 / 16, 7 / 16]], atol=KEPT)
    np.testing.assert_allclose(found["sentence_share"][2], [9 / 16, 7 / 16], atol=KEPT)  # l2 unchanged


@pytest.fixture(scope="module")
def explained(tiny_bert):
    from rcqa.attribution.explanation import explain

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield [explain(tiny_bert, gallery_example(name), ExplainSettings(tolerance=None, method=method))
               for name, method in (("lighthouse-who", "integrated_gradients"), ("orchard-how-many", "attnlrp"))]
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("aggregation", ["l2", "abs_sum"])
def test_a_real_rows_sentence_scores_are_its_tokens_summed_by_sentence_at_every_layer(explained, aggregation):
    """Conservation, independently of the granularity code: every passage token goes to the spaCy sentence its
    first character falls in, and each sentence's share is the sum of its tokens' scores over the layer's total."""
    for result in explained:
        found = sentence_columns(result, aggregation)
        passage = result.example.passage
        sentences = segments(passage).sentences
        passage_tokens = [i for i, segment in enumerate(result.token_segments) if segment == "passage"]
        of_token = [next(n for n, (a, b) in enumerate(sentences) if a <= result.token_offsets[i][0] < b)
                    for i in passage_tokens]
        kept = sorted(set(of_token))  # the window's sentences
        assert found["sentence_starts"] == [max(sentences[n][0], result.token_offsets[passage_tokens[0]][0])
                                            if n == kept[0] else sentences[n][0] for n in kept]
        for name, score in (("sentence_share", aggregation), ("sentence_signed", "sum")):
            tokens = result.layer_scores(score)[:, passage_tokens].astype(np.float64)
            sums = np.stack([tokens[:, [t for t, s in enumerate(of_token) if s == n]].sum(axis=1) for n in kept], 1)
            by_hand = (np.abs(sums) if name == "sentence_share" else sums) / np.abs(sums).sum(axis=1, keepdims=True)
            np.testing.assert_allclose(found[name], by_hand, rtol=0, atol=KEPT)
            assert np.abs(found[name]).sum(axis=1) == pytest.approx(1, abs=len(kept) * KEPT)


def hand_row(shares: list[list[float]], explained: int = 1) -> dict:
    """A row's sentence columns over "Dogs bark. Cats sit here. Birds sing." asked "Where do cats sit?": the
    answer "here" is in the second sentence, and no other shares a question word."""
    passage = "Dogs bark. Cats sit here. Birds sing."
    return {"question": "Where do cats sit?", "passage": passage, "sentence_starts": [0, 11, 26],
            "sentence_ends": [10, 25, 37], "sentence_share": shares, "sentence_signed": shares,
            "sentence_explained": explained, "sentence_predicted": explained, "sentence_gold": explained}


def test_the_run_table_from_stored_sentence_scores_worked_out_by_hand():
    rows = [hand_row([[.5, .3, .2], [.1, .8, .1]]), hand_row([[.2, .6, .2], [.0, 1., .0]]),
            {"question": "Why?", "passage": "Old.", "sentence_share": None, "distribution": None}]
    rows.append({**hand_row([[.3, .4, .3], [.2, .7, .1]]), "question": "Where do dogs sit?"})  # "Dogs bark." shares
    found = summarize_sentences(rows)
    assert found is not None and found["questions"] == 3 and found["from_sentence_scores"] == 3
    assert found["left_out"] == {"rows written before sentence scores were kept": 1}
    mean = {name: [layer["mean"] for layer in found[name]] for name in ("answer_sentence", "question_sentences",
                                                                        "other_sentences", "top_is_answer")}
    np.testing.assert_allclose(mean["answer_sentence"], [(.3 + .6 + .4) / 3, (.8 + 1 + .7) / 3])
    np.testing.assert_allclose(mean["question_sentences"], [.3 / 3, .2 / 3])  # only the fourth row's "Dogs bark."
    np.testing.assert_allclose(mean["other_sentences"], [(.7 + .4 + .3) / 3, (.2 + 0 + .1) / 3])
    np.testing.assert_allclose(mean["top_is_answer"], [(0 + 1 + 1) / 3, 1])
    assert summarize_sentences(rows[2:3]) is None


def numbers(sentence: str) -> list[float]:
    return [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) %", sentence)]


def test_the_sentence_is_read_from_its_table():
    rows = [hand_row([[.5, .3, .2], [.1, .8, .1]]), hand_row([[.2, .6, .2], [.0, 1., .0]]),
            hand_row([[.4, .4, .2], [.1, .85, .05]])]
    found = summarize_sentences(rows)
    assert found is not None
    sentence = sentences_statement(found, ["embeddings", "block 0"])
    expected = [100 * found[name][layer]["mean"] for name in ("answer_sentence", "question_sentences",
                                                              "other_sentences", "top_is_answer") for layer in (0, -1)]
    assert numbers(sentence) == pytest.approx([round(x, 1) for x in expected])
    # a rise: each question's answer share grows by .5, .4 and .45 (mean .45), so every resampled mean is above 0
    change = found["change"]["answer_sentence"]
    assert change["mean"] == pytest.approx(.45) and .4 <= change["low"] <= change["high"] <= .5
    assert sentence.startswith("Over 3 questions, the share of each layer's attribution over the passage on the "
                               "answer's sentence is 43.3 % at embeddings and 88.3 % at block 0 (a rise of +45.0 "
                               f"[{100 * change['low']:+.1f}, {100 * change['high']:+.1f}] points, question by question)")
    # no question's share on question-word sentences changes: its paired interval is [0, 0]
    assert ("on sentences sharing a question word 0.0 % at embeddings and 0.0 % at block 0 (not told apart, question "
            "by question)") in sentence
    # the other sentences: -.5, -.4 and -.45, a fall told apart the same way
    assert "on the other sentences 56.7 % at embeddings and 11.7 % at block 0 (a fall of -45.0 [" in sentence


def section_of(report_html: str) -> tuple[str, list[list[str]]]:
    """The report's sentence section: its bold sentence and its table's rows (cells as text)."""
    part = report_html.split("<h2>Which sentence does each layer rest on?</h2>", 1)[1].split("<h2>", 1)[0]
    bold = re.search(r"<strong>(.*?)</strong>", part, re.S)
    rows = [re.findall(r"<t[dh]>(.*?)</t[dh]>", row) for row in re.findall(r"<tr>(.*?)</tr>", part, re.S)]
    return html.unescape(bold.group(1)) if bold else html.unescape(re.sub(r"<[^>]+>", "", part)).strip(), rows


def test_the_report_section_reads_its_sentence_from_its_table(tmp_path):
    """A hand run whose rows keep sentence scores (the three rows of test_the_sentence_is_read_from_its_table): the
    sentence's numbers are the table's cells at the first and the last layer, and the table's are the hand means."""
    shares = ([[.5, .3, .2], [.1, .8, .1], [.1, .8, .1]], [[.2, .6, .2], [0, 1, 0], [0, 1, 0]],
              [[.4, .4, .2], [.1, .85, .05], [.1, .85, .05]])
    run = write_run(tmp_path / "run", [{**row, **hand_row(found)} for row, found in zip(HAND_ROWS, shares)])
    write([run], tmp_path / "report", images=False)
    sentence, rows = section_of((tmp_path / "report" / "report.html").read_text())
    header, first, last = rows[0], rows[1], rows[-1]
    assert header[1:] == ["the answer&#x27;s sentence", "sentences sharing a question word", "the other sentences",
                          "the top sentence is the answer&#x27;s"]
    assert first[1].startswith("43.3 [") and last[1].startswith("88.3 [")  # (.3 + .6 + .4) / 3, (.8 + 1 + .85) / 3
    cells = [float(row[column].split(" ")[0]) for column in range(1, 5) for row in (first, last)]
    assert numbers(sentence) == cells
    assert (tmp_path / "report" / "tables" / "sentences.csv").is_file()


def test_a_report_of_a_run_without_sentence_scores_or_word_shares_says_so_in_one_sentence(tmp_path):
    run = write_run(tmp_path / "run", HAND_ROWS)  # no passage: neither sentence scores nor words to read them from
    write([run], tmp_path / "report", images=False)
    sentence, rows = section_of((tmp_path / "report" / "report.html").read_text())
    assert sentence == NEEDS_RUN and not rows and sentence.count(". ") == 0


def test_the_report_of_a_run_before_sentence_scores_reads_its_word_shares_and_says_so(tmp_path):
    """Rows with word shares only (tests.helpers.hand_runs.WORD_SHARE_ROWS): without a kept summary the report reads
    them itself, with one it reads the kept section; either way its sentence's numbers are its table's, the answer's
    share the hand-worked (.5 + .3) / 2 and (.8 + .9) / 2, and it says what it read from what."""
    run = write_run(tmp_path / "run", WORD_SHARE_ROWS)
    sections = []
    for kept in (False, True):
        if kept:
            keep_summary(run)
        write([run], tmp_path / f"report-{kept}", images=False)
        report_html = (tmp_path / f"report-{kept}" / "report.html").read_text()
        sentence, rows = section_of(report_html)
        first, last = rows[1], rows[-1]
        assert first[1].startswith("40.0") and last[1].startswith("85.0")
        cells = [float(row[column].split(" ")[0]) for column in range(1, 5) for row in (first, last)]
        assert numbers(sentence) == cells
        assert ("Of 4 questions, 2 are read by sentence, all from their word shares summed by sentence (rows written "
                "before sentence scores were kept); 2 are left out: 1 (explained span absent or repeated), 1 (passage "
                "read in several windows).") in html.unescape(" ".join(report_html.split()))
        sections.append(report_html.split("<h2>Which sentence", 1)[1].split("<h2>", 1)[0])
    assert sections[0] == sections[1]


@pytest.mark.slow
def test_a_committed_run_reports_the_section_from_its_word_shares(tmp_path):
    """A committed run written before the sentence columns: the report sums its word shares by sentence and says so."""
    write([ROOT / "reports/runs/squad-dev-10-sanity"], tmp_path / "report", images=False)
    report_html = (tmp_path / "report" / "report.html").read_text()
    sentence, rows = section_of(report_html)
    assert "from their word shares summed by sentence" in report_html
    first, last = rows[1], rows[-1]
    assert numbers(sentence) == [float(row[column].split(" ")[0]) for column in range(1, 5) for row in (first, last)]


def test_a_run_summary_holds_the_table_of_the_rows_that_keep_sentence_scores_and_draws_it(tmp_path):
    """Rows a and b keep sentence scores, c was written before them (a resumed run): the summary's table is a's and
    b's, c counted out with its reason; a run none of whose rows keeps them has no table and says why when drawn."""
    shares = ([[.5, .3, .2]] * 3, [[.2, .6, .2]] * 3)
    mixed = [{**HAND_ROWS[0], **hand_row(shares[0])}, {**HAND_ROWS[1], **hand_row(shares[1])}, HAND_ROWS[2]]
    summary = summarize(load_run(write_run(tmp_path / "mixed", mixed)))
    assert summary.sentences is not None and summary.sentences["questions"] == 2
    assert summary.sentences["left_out"] == {"rows written before sentence scores were kept": 1}
    assert [layer["mean"] for layer in summary.sentences["answer_sentence"]] == pytest.approx([.45] * 3)
    figure = summary.show("sentences")
    assert [trace.name for trace in figure.data] == ["the answer's sentence", "sentences sharing a question word",
                                                     "the other sentences", "the top sentence is the answer's"]
    assert list(figure.data[0].y) == pytest.approx([45] * 3)
    old = summarize(load_run(write_run(tmp_path / "old", HAND_ROWS)))
    assert old.sentences is None
    with pytest.raises(ValueError, match="needs a run made with this version"):
        old.show("sentences")
