"""HeadScores, the heads of one question scored: its agreement against scipy's Spearman on hand-made grids, its
JSON round trip, the reading of its grid, the CLI verb's documented JSON and the Python API."""
import json

import numpy as np
import pytest
from scipy.stats import spearmanr

import rcqa
from rcqa.attention_heads import HeadKnockouts, HeadScores
from rcqa.figures.heads import checks_reading, checks_table, head_grid, heads_reading, score_reading
from rcqa.gallery import GALLERY
from rcqa.types import Answer, Example, load_result

EXAMPLE = GALLERY[0]


def hand_made(deltas, gradient, flips=None):
    deltas = np.array(deltas, dtype=float)
    flips = np.zeros(deltas.shape, dtype=bool) if flips is None else np.array(flips)
    answers = tuple(tuple("x" for _ in row) for row in deltas)
    return HeadScores(example=Example.of("a b c", "q?"), model="m", fingerprint="f", answer=Answer((), None, 1),
                      window=0, tokens=["a"], layers=[f"block {i}" for i in range(len(deltas))],
                      heads=deltas.shape[1], explained_span="b", fill="zero",
                      knockout=HeadKnockouts(-0.5, deltas, flips, answers), scores={"gradient": np.array(gradient)},
                      conservation={"entering": [0.0] * len(deltas), "absorbed": [0.0] * len(deltas),
                                    "gap": [0.0] * len(deltas)},
                      completeness={"f_difference": [0.0] * len(deltas), "attribution_sum": [0.0] * len(deltas),
                                    "gap": [0.0] * len(deltas)})


def test_agreement_is_spearman_of_each_score_with_the_knockouts_size_layer_by_layer():
    found = hand_made([[-0.3, 0.0, 0.1], [0.2, 0.2, 0.2]], [[0.25, 0.01, 0.2], [0.1, 0.2, 0.3]])
    # layer 0: |Δ| = 0.3, 0, 0.1 ranks as the score does (0.25, 0.01, 0.2): ρ = 1; layer 1: |Δ| constant: no ρ
    assert found.agreement() == {"gradient": [pytest.approx(1.0), None]}
    # a signed score is read against the drop −Δ = 0.3, 0, −0.1: relevance 0.2, 0.1, −0.3 ranks as it does
    signed = hand_made([[-0.3, 0.0, 0.1]], [[0, 0, 0]])
    signed.scores["attnlrp"] = np.array([[0.2, 0.1, -0.3]])
    assert signed.agreement()["attnlrp"] == [pytest.approx(1.0)]
    other = hand_made([[-0.3, 0.0, 0.1, 0.05]], [[0.0, 0.3, 0.2, 0.1]])
    assert other.agreement()["gradient"][0] == pytest.approx(spearmanr([0, .3, .2, .1], [.3, 0, .1, .05]).statistic)


def test_the_reading_names_the_head_whose_knockout_lowers_the_span_most_from_the_grids_data():
    found = hand_made([[-0.05, -0.3, 0.1], [-0.2, 0.01, -0.15]], [[0] * 3, [0] * 3],
                      flips=[[False, True, False], [False, False, False]])
    chart = head_grid(found)
    assert heads_reading(chart.data) == ("Knocking out block 0, head 1 lowers log p(span) most (-0.300); 3 of 6 "
                                         "heads lower it by more than 0.1, and 1 change the answer.")
    assert chart.figure.data[0].z.tolist() == [[-0.05, -0.3, 0.1], [-0.2, 0.01, -0.15]]
    assert heads_reading(head_grid(hand_made([[0.1, 0.0]], [[0, 0]])).data).startswith("No head's knock-out")


def test_the_cli_writes_the_documented_json_that_load_result_reads(tiny_model_dirs, tmp_path):
    from rcqa.cli import main

    passage = tmp_path / "passage.txt"
    passage.write_text(EXAMPLE.passage)
    out = tmp_path / "heads.json"
    assert main(["heads", "--passage-file", str(passage), "--question", EXAMPLE.question, "--model",
                 tiny_model_dirs["bert"], "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["layers"] == ["block 0", "block 1", "block 2"] and data["heads"] == 2
    assert np.array(data["scores"]["gradient"]).shape == np.array(data["scores"]["attnlrp"]).shape == (3, 2)
    assert max(data["conservation"]["gap"]) < 1e-4
    assert np.array(data["scores"]["attention_attribution"]).shape == (3, 2)
    np.testing.assert_allclose(data["completeness"]["attribution_sum"], data["completeness"]["f_difference"],
                               rtol=1e-2, atol=1e-7)
    assert np.array(data["knockout"]["delta_log_prob"]).shape == (3, 2)
    assert np.array(data["knockout"]["flips"]).dtype == bool
    loaded = load_result(out)
    assert isinstance(loaded, HeadScores) and loaded.to_dict() == HeadScores.from_dict(data).to_dict()
    # the API gives the same scores as the CLI wrote
    again = rcqa.heads(tiny_model_dirs["bert"], EXAMPLE.passage, EXAMPLE.question)
    np.testing.assert_allclose(again.knockout.delta_log_likelihood, data["knockout"]["delta_log_prob"], atol=1e-9)


def test_a_scores_reading_names_its_top_head_and_where_its_knockout_ranks_by_hand():
    found = hand_made([[-0.3, 0.0, 0.1]], [[0.05, 0.01, 0.2]])
    # the gradient's top is head 2 (0.2); by |Δ| (0.3, 0, 0.1) its knock-out is the 2nd largest
    assert score_reading(head_grid(found, "gradient").data, "gradient") == (
        "The gradient ranks block 0, head 2 first (+0.2000); its knock-out's change in log p(span) (+0.100) ranks "
        "2nd of 3.")
    found.scores["attnlrp"] = np.array([[0.1, 0.3, -0.2]])  # signed: read against the drop −Δ = 0.3, 0, −0.1
    assert score_reading(head_grid(found, "attnlrp").data, "attnlrp").endswith(
        "drop in log p(span) (+0.000) ranks 2nd of 3.")


def test_the_checks_reading_states_each_checks_worst_layer():
    found = hand_made([[0.1], [0.2]], [[0.1], [0.2]])
    found.conservation["gap"], found.completeness["gap"] = [2e-7, 5e-8], [0.001, 0.004]
    assert checks_reading(checks_table(found)) == (
        "Conservation (AttnLRP per head): the heads' relevance plus what the ε-rule absorbs equals the relevance "
        "reaching the attention output to within 2.0e-07 of it at worst (block 0). Completeness (attention "
        "attribution): a layer's attributions add up to F(A) − F(0) to within 0.40% at worst (block 1).")


def test_the_closest_score_is_named_only_where_a_paired_interval_over_the_layers_tells_it_apart():
    import pandas as pd

    from rcqa.figures.heads import closest_reading

    layers = range(12)
    # gradient leads attnlrp by 0.3 at every layer (interval [0.3, 0.3]); attention attribution by 0.1 at every layer
    ahead = pd.DataFrame({"gradient": [0.9] * 12, "attnlrp": [0.6] * 12, "attention_attribution": [0.8] * 12},
                         index=layers)
    assert closest_reading(ahead, "gradient") == ("The closest: the gradient, ahead of every other score by a "
                                                  "paired interval over the layers.")
    # ahead of attention attribution by +0.5 at half the layers and −0.4 at the others: the interval covers 0
    mixed = ahead.assign(attention_attribution=[0.4, 1.3] * 6)
    assert closest_reading(mixed, "gradient") == ("Highest mean: the gradient; not told apart from attention "
                                                  "attribution (paired interval over the layers).")
    assert closest_reading(ahead.iloc[:6], "gradient").startswith(
        "Highest mean: the gradient; not told apart from the others: 6 layers are too few")
