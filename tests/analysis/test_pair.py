"""Two explanations side by side (rcqa.compare), on results built by hand: the common word axis, the difference,
the divergence per layer (against scipy's), each side's roles, the views and the file."""
import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

import rcqa
from rcqa.analysis.pair import SideBySide, compare, describe
from rcqa.types import ExplainSettings
from tests.helpers.app_harness import read_html
from tests.helpers.handmade import handmade

QUESTION = [("Who", "WP"), ("built", "VBD"), ("it", "PRP"), ("?", ".")]
TEXT = "Ellison built it in 1872 ."
ELLISON, YEAR = 0, 4


def explained(scores: list[list[float]], span: int, words=("Ellison", "built", "it", "in", "1872", "."),
              tags=("NNP", "VBD", "PRP", "IN", "CD", ".")):
    """A two-layer result over TEXT whose words score per layer as given (punctuation 0), explaining one word."""
    passage = [(word, tag, [layer[i] for layer in scores] if i < len(scores[0]) else [0, 0])
               for i, (word, tag) in enumerate(zip(words, tags))]
    return handmade(QUESTION, passage, explained=(span, span), passage_text=TEXT)


@pytest.fixture
def predicted():  # the model's answer, 1872: embeddings 1 1 0 0 2, block 0 all on 1872
    return explained([[1, 1, 0, 0, 2], [0, 0, 0, 0, 4]], YEAR)


@pytest.fixture
def gold():  # the gold answer, Ellison: embeddings 2 0 0 0 2, block 0 all on Ellison
    return explained([[2, 0, 0, 0, 2], [4, 0, 0, 0, 0]], ELLISON)


def test_both_distributions_share_one_word_axis_and_their_difference_is_b_minus_a(predicted, gold):
    pair = compare(predicted, gold)
    assert [text for _, _, text in pair.words] == ["Ellison", "built", "it", "in", "1872"]  # punctuation is no word
    first, second = pair.shares
    assert first.tolist() == [[0.25, 0.25, 0, 0, 0.5], [0, 0, 0, 0, 1]]
    assert second.tolist() == [[0.5, 0, 0, 0, 0.5], [1, 0, 0, 0, 0]]
    assert pair.difference.tolist() == [[0.25, -0.25, 0, 0, 0], [1, 0, 0, 0, -1]]


def test_the_divergence_per_layer_is_scipys_jensen_shannon_in_bits(predicted, gold):
    pair = compare(predicted, gold)
    reference = jensenshannon([0.25, 0.25, 0, 0, 0.5], [0.5, 0, 0, 0, 0.5], base=2) ** 2
    assert pair.jsd[0] == pytest.approx(reference) and pair.jsd[1] == pytest.approx(1.0)  # disjoint at block 0
    assert compare(predicted, predicted).jsd.tolist() == [0.0, 0.0]
    assert compare(predicted, predicted).same_question_asked and not pair.same_question_asked


def test_each_side_has_its_own_roles_from_its_own_span(predicted, gold):
    pair = compare(predicted, gold, k=2)
    roles_a, roles_b = pair.roles
    # A (1872): embeddings' top-2 are 1872 (answer) and Ellison (within 5 words of it: supporting); block 0 has one
    assert roles_a["answer"].tolist() == [50, 100] and roles_a["supporting"].tolist() == [50, 0]
    # B (Ellison): embeddings' top-2 are Ellison (answer) and 1872 (4 words after it: supporting)
    assert roles_b["answer"].tolist() == [50, 100] and roles_b["supporting"].tolist() == [50, 0]
    # the query word "built" is no top word in either; the shares of each layer add up to 100
    assert all(np.allclose(sum(roles.values()), 100) for roles in pair.roles)


def test_a_word_outside_one_sides_window_has_no_share_there(predicted):
    # B reads only "it in 1872" (another window of the same passage)
    window = explained([[0, 1, 3], [0, 0, 2]], 2, words=("it", "in", "1872", "."), tags=("PRP", "IN", "CD", "."))
    pair = compare(predicted, window)
    second = pair.shares[1]
    assert np.isnan(second[:, :2]).all() and second[0, 2:].tolist() == [0, 0.25, 0.75]
    # there B puts nothing on Ellison and built: the divergence reads them as 0
    expected = jensenshannon([0.25, 0.25, 0, 0, 0.5], [0, 0, 0, 0.25, 0.75], base=2) ** 2
    assert pair.jsd[0] == pytest.approx(expected)
    assert "(2 words only A reads, 0 only B)" in pair.show("heatmaps").layout.title.subtitle.text


def test_two_passages_or_two_depths_are_refused_in_one_sentence(predicted):
    other = handmade(QUESTION, [("Paris", "NNP", [1, 1])], explained=(0, 0))
    with pytest.raises(ValueError, match="different passages"):
        compare(predicted, other)
    deeper = explained([[1, 1, 0, 0, 2], [0, 0, 0, 0, 4]], YEAR)
    deeper.layers = deeper.layers[:1]
    deeper.scores = deeper.scores[:, :, :1]
    with pytest.raises(ValueError, match="2 and 1 layers"):
        compare(predicted, deeper)


def test_the_pair_draws_its_views_and_names_each_side(predicted, gold):
    pair = rcqa.compare(predicted, gold, labels=("predicted <b>", "gold"))
    heatmaps = pair.show("heatmaps")
    assert [trace.type for trace in heatmaps.data] == ["heatmap"] * 3
    assert np.allclose(np.asarray(heatmaps.data[2].z, dtype=float), 100 * pair.difference)
    assert "A: predicted &lt;b&gt;" in [a.text for a in heatmaps.layout.annotations]  # escaped for Plotly
    assert np.allclose(pair.show("jsd").data[0].y, np.nan_to_num(pair.jsd))
    roles = pair.show("roles")
    assert {trace.name for trace in roles.data} >= {"answer", "supporting", "other"}
    with pytest.raises(ValueError, match="unknown view"):
        pair.show("nope")
    tags, text = read_html(pair._repr_html_())
    assert "predicted <b>" in text and "predicted <b>" not in pair._repr_html_()
    # without labels each side says what it explains
    gold.settings, predicted.settings = ExplainSettings(span="gold"), ExplainSettings(span="predicted")
    assert compare(predicted, gold).labels == ("handmade: span_log_prob of the answer “1872”",
                                                "handmade: span_log_prob of the gold span “Ellison”")
    predicted.settings = ExplainSettings(span="nbest:1")
    assert describe(predicted) == "handmade: span_log_prob of n-best span #2 “1872”"


def test_a_pair_saves_and_loads_exactly(predicted, gold, tmp_path):
    pair = compare(predicted, gold, labels=("predicted", "gold"), k=2)
    loaded = SideBySide.load(pair.save(tmp_path / "pair.npz"))
    assert loaded.labels == ("predicted", "gold") and loaded.k == 2
    assert np.array_equal(loaded.a.scores, predicted.scores) and np.array_equal(loaded.b.scores, gold.scores)
    assert np.allclose(loaded.jsd, pair.jsd)
    with pytest.raises(ValueError, match=r"\.npz"):
        pair.save(tmp_path / "pair.json")
