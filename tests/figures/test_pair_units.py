"""Side by side by sentence (rcqa.figures.pair_units): each side's shares are its own explanation's by sentence,
two models whose tokenizers differ line up on the passage's sentences, and the sentence under the chart counts the
layers as a table worked out by hand does."""
import numpy as np
import pandas as pd
import pytest

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures import pair_unit_heatmaps, pair_unit_reading
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from tests.helpers.lighthouse import SENTENCES

QUICK = ExplainSettings(steps=2, tolerance=None, windows="all")  # the tiny models read 128 tokens: two windows


@pytest.fixture(scope="module")
def two_models(tiny_model_dirs):
    example = gallery_example("lighthouse-who")
    return [explain(load_model(tiny_model_dirs[family]), example, QUICK) for family in ("bert", "roberta")]


def test_each_side_holds_its_own_explanations_shares_and_two_tokenizers_line_up(two_models):
    first, second = two_models
    assert first.tokens != second.tokens  # WordPiece against byte-level BPE
    table = pair_unit_heatmaps(first, second, ("A", "B")).data
    assert list(table[table.layer == 0].text) == SENTENCES and not table[["share_pct_a", "share_pct_b"]].isna().any().any()
    for result, column in ((first, "share_pct_a"), (second, "share_pct_b")):
        units = result.granularity("sentence")
        expected = 100 * units.shares() * np.sign(units.scores[:, units.passage_units()])
        np.testing.assert_allclose(table[column].to_numpy().reshape(expected.shape), expected)
    start = first.explained_span()[0]
    passage = first.example.passage
    assert table[table.layer == 0].holds_answer.tolist() == [
        passage.index(s) <= start < passage.index(s) + len(s) for s in SENTENCES]


def test_the_sentence_counts_the_layers_where_the_two_rest_on_the_same_unit():
    rows = [(0, "embeddings", [10.0, 60.0, 30.0], [20.0, 50.0, 30.0]),
            (1, "block 0", [70.0, 20.0, 10.0], [10.0, 10.0, 80.0]),
            (2, "block 1", [0.0, 0.0, 0.0], [40.0, 30.0, 30.0]),  # A scores no unit here: not counted
            (3, "block 2", [-5.0, 90.0, -5.0], [-60.0, 30.0, 10.0])]  # signed: the largest |share| counts
    table = pd.DataFrame([{"layer": layer, "layer_label": label, "unit": unit + 1, "share_pct_a": a[unit],
                           "share_pct_b": b[unit]} for layer, label, a, b in rows for unit in range(3)])
    assert pair_unit_reading(table) == ("A and B rest most on the same sentence at 1 of the 3 layers where both score "
                                        "one; they part at block 0 (A #1, B #3), block 2 (A #2, B #1).")
    same = table.assign(share_pct_b=table.share_pct_a)
    assert pair_unit_reading(same, "phrase") == ("A and B rest most on the same phrase at every one of the 3 layers "
                                                 "where both score one.")
    none = table.assign(share_pct_a=0.0)
    assert pair_unit_reading(none) == "No layer has a sentence that both A and B score."


def test_two_layers_by_sentence_name_the_sentence_that_gains_and_the_one_that_loses():
    from rcqa.figures import unit_layer_pair_reading

    table = pd.DataFrame({"unit": [1, 2, 3], "difference_pct": [4.26, -6.04, 1.78], "first": "embeddings",
                          "second": "block 5"})
    assert unit_layer_pair_reading(table) == ("From embeddings to block 5, sentence #1 gains most (+4.3 points) and "
                                              "#2 loses most (-6.0 points).")
    still = table.assign(difference_pct=[0.01, -0.04, 0.0])
    assert unit_layer_pair_reading(still, "phrase") == "From embeddings to block 5 no phrase moves by a tenth of a point."
