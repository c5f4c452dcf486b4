"""Attribution by token, word, phrase and sentence (issue 55): every token is in exactly one unit, so each layer's
total is the same at every granularity; the units are the sentences and noun phrases as written, counted by hand on
the lighthouse passage; a sentence scores the sum of its words' scores (the paper's word merge, rcqa.analysis.words);
a whole passage's sentence cut by a window boundary is one unit."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rcqa.analysis.words import word_scores
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.qa import encode
from rcqa.types import AGGREGATIONS
from rcqa.types.settings import SpanSpec
from tests.helpers.lighthouse import SENTENCES as LIGHTHOUSE_SENTENCES
from rcqa.types.granularity import GRANULARITIES, SPECIAL



@pytest.fixture(scope="module")
def lighthouse(tiny_bert):
    # the gold span (the tiny model's own answer is anywhere): Margaret Ellison
    return explain(tiny_bert, gallery_example("lighthouse-who"),
                   ExplainSettings(span=SpanSpec("gold"), steps=2, tolerance=None))


@pytest.fixture(scope="module")
def whole_canal(tiny_bert):
    """canal-long read whole in windows of 64 tokens, so that sentences are cut by window boundaries."""
    few = dataclasses.replace(tiny_bert, max_len=64, doc_stride=16)
    return explain(few, gallery_example("canal-long"), ExplainSettings(windows="all", steps=2, tolerance=None))


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_every_token_is_in_one_unit_and_every_layers_total_is_kept(lighthouse, whole_canal, granularity):
    for result in (lighthouse, whole_canal):
        for aggregation in AGGREGATIONS:
            scores = result.granularity(granularity, aggregation)
            held = sorted(token for unit in scores.units for token in unit.tokens)
            assert held == list(range(len(result.tokens)))
            tokens = result.layer_scores(aggregation)
            assert scores.scores.shape == (len(result.layers), len(scores.units))
            assert np.allclose(scores.scores.sum(axis=1), tokens.sum(axis=1), rtol=1e-6, atol=1e-9)


def test_the_lighthouse_reads_as_its_four_sentences_the_question_and_the_special_tokens(lighthouse):
    scores = lighthouse.granularity("sentence")
    passage = [unit.text for unit in scores.units if unit.segment == "passage"]
    assert passage == LIGHTHOUSE_SENTENCES
    question = [unit.text for unit in scores.units if unit.segment == "question"]
    assert question == [gallery_example("lighthouse-who").question]
    assert sorted(unit.text for unit in scores.units if unit.segment == SPECIAL) == ["[CLS]", "[SEP]"]
    # the explained span, Margaret Ellison, is in the first sentence
    assert scores.units[scores.answer_unit].text == LIGHTHOUSE_SENTENCES[0]


def test_a_sentence_scores_the_sum_of_its_words_at_every_layer(lighthouse):
    for aggregation in ("sum", "l2"):
        by_word = word_scores(lighthouse, aggregation)
        scores = lighthouse.granularity("sentence", aggregation)
        for unit, column in zip(scores.units, scores.scores.T):
            if unit.segment != "passage":
                continue
            inside = [i for i, word in enumerate(lighthouse.words)
                      if word.segment == "passage" and unit.start_char <= word.start_char < unit.end_char]
            assert np.allclose(column, by_word[:, inside].sum(axis=1), rtol=1e-6, atol=1e-9)


def test_phrases_are_the_noun_chunks_and_every_other_word_alone(lighthouse):
    texts = [unit.text for unit in lighthouse.granularity("phrase").units if unit.segment == "passage"]
    # the first sentence by hand: spaCy's noun chunks, and the words between them one by one
    assert texts[:12] == ["The lighthouse", "on", "Corran Point", "was", "designed", "by", "the engineer",
                          "Margaret Ellison", "and", "first", "lit", "in"]
    assert lighthouse.granularity("word").units[1].text == lighthouse.words[0].text


def test_a_sentence_cut_by_a_window_boundary_is_one_unit_of_the_whole_passage(whole_canal, tiny_bert):
    few = dataclasses.replace(tiny_bert, max_len=64, doc_stride=16)
    example = gallery_example("canal-long")
    windows = encode(few, example.question, example.passage)
    assert len(windows) > 2
    # the characters where each window's passage ends (the last window reads to the end)
    ends = [max(end for (start, end), inside in zip(windows.offsets[w], windows.passage_mask[w].tolist()) if inside)
            for w in range(len(windows) - 1)]
    sentences = [unit for unit in whole_canal.granularity("sentence").units if unit.segment == "passage"]
    cut = [unit for unit in sentences if any(unit.start_char < end < unit.end_char for end in ends)]
    assert cut  # some sentence runs on past a window's end, and is still one unit
    assert " ".join(unit.text for unit in sentences).split() == example.passage.split()


def test_the_strongest_passage_unit_is_the_largest_share_and_an_unknown_granularity_is_refused(lighthouse):
    scores = lighthouse.granularity("sentence")
    shares = scores.shares()
    assert np.allclose(shares.sum(axis=1), 1)
    passage = scores.passage_units()
    assert scores.strongest() == [passage[int(np.argmax(row))] for row in np.abs(scores.scores[:, passage])]
    with pytest.raises(ValueError, match="unknown granularity 'paragraph'"):
        lighthouse.granularity("paragraph")  # type: ignore[arg-type]


def test_the_sentence_chart_draws_the_shares_and_its_readings_name_the_largest(lighthouse):
    from rcqa.figures import unit_heatmap, unit_readings

    for aggregation in ("l2", "sum"):
        chart = unit_heatmap(lighthouse, "sentence", aggregation)
        scores = lighthouse.granularity("sentence", aggregation)
        passage = scores.passage_units()
        magnitudes = np.abs(scores.scores[:, passage])
        expected = 100 * magnitudes / magnitudes.sum(axis=1, keepdims=True) * np.sign(scores.scores[:, passage])
        drawn = np.asarray(chart.plotly.data[0].z, dtype=float)  # sentences × layers
        assert np.allclose(drawn, expected.T)
        assert sum(label.startswith("▶") for label in chart.plotly.data[0].y) == 1  # the explained span's sentence
        for layer, reading in enumerate(unit_readings(chart.data)):
            best = int(np.argmax(magnitudes[layer]))
            assert reading.startswith(f"{lighthouse.layers[layer]}: #{best + 1}")
            assert f"with {100 * magnitudes[layer, best] / magnitudes[layer].sum():.0f}%" in reading
            assert ("holds the answer" in reading) == (passage[best] == scores.answer_unit)


def test_a_tie_for_the_largest_share_is_said_as_a_tie():
    import pandas as pd

    from rcqa.figures import unit_readings

    table = pd.DataFrame({"layer": [0, 0, 0, 1, 1, 1], "layer_label": ["embeddings"] * 3 + ["block 0"] * 3,
                          "unit": [1, 2, 3] * 2, "holds_answer": [False, True, False] * 2,
                          "share_pct": [40.0, -40.0, 20.0, 0.0, 0.0, 0.0]})
    assert unit_readings(table) == [
        "embeddings: #1 and #2 (holds the answer) tie with 40% of the layer's attribution over the passage.",
        "block 0: no passage unit has any attribution."]


def test_the_strongest_unit_by_magnitude_and_signed_by_hand():
    from rcqa.types.granularity import Unit, UnitScores

    units = [Unit("[CLS]", SPECIAL, 0, 0, (0,)), Unit("A.", "passage", 0, 2, (1,)), Unit("B.", "passage", 3, 5, (2,)),
             Unit("C.", "passage", 6, 8, (3,))]
    # layer 0: B argues hardest against (-0.9), C most for it (0.5); layer 1: no passage unit scores ([CLS] does)
    scores = np.array([[7.0, 0.2, -0.9, 0.5], [3.0, 0.0, 0.0, 0.0]])
    found = UnitScores("sentence", "sum", 0, ["embeddings", "block 0"], units, scores, answer_unit=3)
    assert found.strongest() == [2, None] and found.strongest(signed=True) == [3, None]
