"""The per-example analyses on a result built by hand: every expected value below was worked out on paper
(or by scipy / sklearn), never by the code under test."""
import itertools
import math

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from rcqa.analysis.pos import answer_pos, pos_group, pos_shares
from rcqa.analysis.projection import project
from rcqa.analysis.report import analyses
from rcqa.analysis.roles.categories import category_masks, word_categories
from rcqa.analysis.roles.readings import phase_readings
from rcqa.analysis.roles.shares import category_shares, quantifier_share, top_words
from rcqa.text import is_quantifier_question
from rcqa.analysis.similarity import describe, jensen_shannon, jsd_matrix, restrict
from rcqa.analysis.words import (
    distribution,
    is_empty,
    passage_distribution,
    ranks,
    top_k,
    word_scores,
)
from rcqa.types import Word
from tests.analysis.hand_roles import hand_numbers
from tests.helpers.handmade import handmade
from tests.helpers.orchard import PASSAGE, QUESTION, QUESTION_TEXT, SIX_HUNDRED, WORDS

@pytest.fixture
def result():
    return handmade(QUESTION, PASSAGE, explained=(SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)


def marked(*words_at: int) -> list[bool]:
    return [i in words_at for i in range(len(WORDS))]


def test_passage_words_leave_out_punctuation(result):
    assert [w.text for w in result.passage_words()] == WORDS


def test_a_word_scores_the_sum_of_its_pieces(result):
    scores = word_scores(result)
    two_thousand = next(i for i, w in enumerate(result.words) if w.text == "2,300")
    assert len(result.words[two_thousand].tokens) == 3 and scores[0, two_thousand] == pytest.approx(1.0)


def test_the_distribution_is_over_words_and_sums_to_one_where_there_is_attribution(result):
    distribution = passage_distribution(result)
    expected_first = np.zeros(17)
    expected_first[[2, 7, 8, 11, 12]] = np.array([2, 1, 5, 4, 3]) / 15  # has, 2,300, trees, pear, trees
    assert np.allclose(distribution[0], expected_first)
    expected_second = np.zeros(17)
    expected_second[[3, 8, 9, 14]] = np.array([2, 1.5, 6, 3]) / 12.5  # 14, trees, 600, 250
    assert np.allclose(distribution[1], expected_second)
    assert not distribution[2].any()  # block 1 only looks at punctuation: no distribution at all
    assert list(is_empty(distribution)) == [False, False, True]


def test_top_k_holds_only_words_with_attribution_best_first(result):
    top = top_k(passage_distribution(result), 5)
    assert [[WORDS[i] for i in row] for row in top] == [["trees", "pear", "trees", "has", "2,300"],
                                                         ["600", "250", "14", "trees"], []]
    assert [list(row) for row in top_k(passage_distribution(result), 2)] == [[8, 11], [9, 14], []]


def test_ranks_count_from_one():
    assert ranks(np.array([[0.1, 0.6, 0.3]])).tolist() == [[3, 1, 2]]


def test_categories_follow_the_papers_definitions_by_hand(result):
    masks = category_masks(result)
    assert list(masks["answer"]) == marked(9)
    # five words either side of "600", punctuation not counted: "fields" to "trees" before, "are" to "250" after
    assert list(masks["supporting"]) == marked(4, 5, 6, 7, 8, 10, 11, 12, 13, 14)
    # question words less stopwords: orchard, many, pear, trees (the question's comma is no word)
    assert list(masks["query"]) == marked(8, 11, 12)
    assert word_categories(result)[8] == "supporting+query" and word_categories(result)[9] == "answer"


def test_category_shares_divide_by_the_top_words_a_layer_has(result):
    shares = category_shares(result, passage_distribution(result), k=5)
    assert np.allclose(shares["answer"][:2], [0, 25]) and np.isnan(shares["answer"][2])
    assert np.allclose(shares["supporting"][:2], [80, 50])
    assert np.allclose(shares["query"][:2], [60, 25])


def test_categories_follow_the_explained_span_not_the_prediction():
    explained_gold = handmade(QUESTION, PASSAGE, explained=(SIX_HUNDRED, SIX_HUNDRED), predicted=(17, 17),
                              question_text=QUESTION_TEXT)
    assert explained_gold.answer.text == "250"
    assert list(category_masks(explained_gold)["answer"]) == marked(9)


def test_quantifier_share_by_hand(result):
    # numbers (CD): 14, 2,300, 600, 250 → N_q = 4. Embeddings: 2,300 in the top-5 → 1/4.
    # Block 0: 600, 250, 14 in the top, less one because 600 is the explained span → 2/4. Block 1: no top words.
    shares = quantifier_share(result, passage_distribution(result), k=5)
    assert np.allclose(shares[:2], [25, 50]) and np.isnan(shares[2])


def test_quantifier_share_needs_a_quantifier_question_and_two_numbers(result):
    question = [("Who", "WP"), ("owns", "VBZ"), ("it", "PRP")]
    assert quantifier_share(handmade(question, PASSAGE, (SIX_HUNDRED, SIX_HUNDRED)),
                            passage_distribution(result)) is None
    one_number = [(w, "NN" if w in ("14", "2,300", "250") else tag, s) for w, tag, s in PASSAGE]
    sparse = handmade(QUESTION, one_number, (SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)
    assert quantifier_share(sparse, passage_distribution(sparse)) is None
    two_numbers = [(w, "NN" if w in ("14", "2,300") else tag, s) for w, tag, s in PASSAGE]
    enough = handmade(QUESTION, two_numbers, (SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)
    # numbers 600 and 250: block 0 holds both, less one for 600 → 1/2
    assert quantifier_share(enough, passage_distribution(enough))[1] == pytest.approx(50)


@pytest.mark.parametrize("question, expected", [
    ("How many pear trees are there?", True), ("how much did it cost", True), ("Many wonder how", True),
    ("How tall is it?", False), ("However many there are", False), ("How did muchness arise?", False)])
def test_quantifier_questions(question, expected):
    assert is_quantifier_question(question) is expected


def test_jsd_is_scipys_in_bits_and_undefined_without_a_distribution(result):
    distribution = passage_distribution(result)
    matrix = jsd_matrix(distribution)
    reference = jensenshannon(distribution[0], distribution[1], base=2) ** 2
    assert matrix[0, 1] == pytest.approx(reference) and matrix[1, 0] == pytest.approx(reference)
    assert np.diag(matrix)[:2].tolist() == [0, 0]
    assert np.isnan(matrix[2]).all() and np.isnan(matrix[:, 2]).all()
    assert math.isnan(jensen_shannon(distribution[0], distribution[2]))
    assert jensen_shannon(np.array([1.0, 0]), np.array([0, 1.0])) == pytest.approx(1.0)


def test_restricting_to_or_without_the_top_k_renormalises():
    distribution = np.array([[0.4, 0.3, 0.2, 0.1, 0.0]])
    assert np.allclose(restrict(distribution, "topk_kept", 2), [[4 / 7, 3 / 7, 0, 0, 0]])
    assert np.allclose(restrict(distribution, "topk_removed", 2), [[0, 0, 2 / 3, 1 / 3, 0]])
    assert not restrict(distribution, "topk_removed", 4).any()  # nothing left: no distribution
    with pytest.raises(ValueError, match="unknown variant"):
        restrict(distribution, "halves", 2)


def test_a_layer_emptied_by_removing_its_top_words_has_undefined_jsd(result):
    removed = jsd_matrix(passage_distribution(result), "topk_removed", k=4)
    # embeddings keep "2,300" (rank 5); block 0 has only 4 words with attribution: nothing remains
    assert removed[0, 0] == 0 and np.isnan(removed[0, 1]) and np.isnan(removed[1, 1])


def test_pos_groups_of_the_top_words_and_of_the_answer(result):
    shares = pos_shares(result, passage_distribution(result), k=5)
    assert shares["entity"][:2].tolist() == [80, 100] and shares["verb"][:2].tolist() == [20, 0]
    assert np.isnan(shares["entity"][2]) and shares["punctuation"][:2].tolist() == [0, 0]
    assert answer_pos(result) == {"entity": 100, "verb": 0, "adjective": 0, "adverb": 0, "function": 0,
                                  "punctuation": 0, "other": 0}


@pytest.mark.parametrize("text, tag, group", [
    ("600", "CD", "entity"), ("its", "PRP$", "entity"), ("ran", "VBD", "verb"), ("taller", "JJR", "adjective"),
    ("quickly", "RB", "adverb"), ("the", "DT", "function"), ("which", "WDT", "function"), (",", ",", "punctuation"),
    ("<b>", "NNP", "punctuation"), ("e.g.", "FW", "other"), ("Paris", "NNPS", "entity"), ("to", "TO", "function")])
def test_pos_group_of_a_word(text, tag, group):
    assert pos_group(Word(text, 0, len(text), "passage", (0,), tag)) == group


def test_phases_split_layers_into_thirds_and_name_the_leading_category():
    layers = ["embeddings"] + [f"block {i}" for i in range(6)]
    # a 5-word answer can fill all of a top-5 (its ceiling is 100 %), so no ceiling is said
    numbers = hand_numbers({"answer": [0, 0, 0, 10, 20, 70, 90], "supporting": [10, 10, 10, 60, 50, 20, 10],
                            "query": [80, 70, 60, 20, 10, 0, 0], "other": [10, 20, 30, 10, 20, 10, 0]},
                           answer_attribution=[0, 0, 3, 10, 20, 60, 80], ceiling=[100] * 7, answer_words=5)
    readings = phase_readings(layers, numbers)
    assert [phase for phase, _ in readings] == ["Early (embeddings–block 1)", "Middle (block 2–block 3)",
                                                 "Late (block 4–block 5)"]
    assert readings[0][1] == ("mostly query words in the top-5 (answer 0%; supporting 10%; query 70%; other 20%): "
                              "matching the question's words in the passage. The answer's 5 words are 10% of the "
                              "passage's words and hold 1% of each layer's attribution on average.")
    assert readings[1][1] == ("mostly supporting words in the top-5 (answer 15%; supporting 55%; query 15%; other "
                              "15%): reading the context around the answer. The answer's 5 words are 10% of the "
                              "passage's words and hold 15% of each layer's attribution on average.")
    assert readings[2][1] == ("mostly answer words in the top-5 (answer 80%; supporting 15%; query 0%; other 5%): "
                              "settling on and verifying the answer. The answer's 5 words are 10% of the passage's "
                              "words and hold 70% of each layer's attribution on average.")
    # explaining "no answer", the answer category is the best span the model weighed against it
    abstaining = phase_readings(layers, numbers, abstention=True)
    assert abstaining[2][1].startswith("mostly answer words in the top-5 (answer 80%; supporting 15%; query 0%; other "
                                       "5%): weighing the best span against \"no answer\". The best span's 5 words")
    assert "reading the context around the best span." in abstaining[1][1]
    assert abstaining[0][1] == readings[0][1].replace("The answer's", "The best span's")


def test_phases_skip_layers_without_top_words():
    layers = ["embeddings", "block 0", "block 1"]
    nan = np.nan
    numbers = hand_numbers({"answer": [nan, 50, nan], "supporting": [nan, 50, nan], "query": [nan, 0, nan]},
                           answer_attribution=[nan, 60, nan], ceiling=[nan, 100, nan])
    readings = dict(phase_readings(layers, numbers))
    assert readings["Early (embeddings)"] == "no layer here has any top word."
    # a tie is said to be one, never "mostly" the first role listed
    assert readings["Middle (block 0)"].startswith("answer and supporting words equally in the top-5 (answer 50%; "
                                                   "supporting 50%")


def test_a_reading_says_mostly_only_past_half_and_lists_whole_percents_that_add_up_to_a_hundred():
    layers = ["embeddings"]
    lead = dict(phase_readings(layers, hand_numbers({"answer": [40.0], "supporting": [35.0], "other": [25.0]},
                                                    [30], [100], answer_words=5)))["Early (embeddings)"]
    assert lead.startswith("more answer words than any other kind in the top-5 (answer 40%; supporting 35%; other "
                           "25%)")
    thirds = dict(phase_readings(layers, hand_numbers({"answer": [100 / 3], "query": [100 / 3], "other": [100 / 3]},
                                                      [30], [100], answer_words=5)))["Early (embeddings)"]
    assert "(answer 34%; query 33%; other 33%)" in thirds  # 33.3 each: the largest remainder takes the last point


def test_the_json_analyses_by_hand(result):
    document = analyses(result)  # the defaults: the l2 score, k = 5, the first target
    assert (document["aggregation"], document["k"], document["target"]) == ("l2", 5, "span_log_prob")
    assert document["top_k"] == [["trees", "pear", "trees", "has", "2,300"], ["600", "250", "14", "trees"], []]
    assert document["distribution"][0][8] == round(5 / 15, 6) and document["distribution"][1][9] == 0.48
    assert document["categories"] == {"answer": [0, 25, None], "supporting": [80, 50, None],
                                      "query": [60, 25, None]}
    assert document["pos"]["entity"] == [80, 100, None] and document["pos"]["verb"] == [20, 0, None]
    assert document["answer_pos"]["entity"] == 100
    assert document["quantifier_share"] == [25, 50, None]
    assert document["jsd"]["full"][0][1] == round(jensenshannon(*passage_distribution(result)[:2], base=2) ** 2, 6)
    assert document["jsd"]["topk_kept"][1][1] == 0 and document["jsd"]["topk_removed"][1] == [None] * 3
    assert [phase["layers"] for phase in document["phases"]] == ["Early (embeddings)", "Middle (block 0)",
                                                                 "Late (block 1)"]
    assert document["phases"][2]["reading"] == "no layer here has any top word."
    three = analyses(result, k=3)
    assert three["k"] == 3 and three["top_k"][0] == ["trees", "pear", "trees"]
    assert three["categories"]["query"][0] == 100 and three["quantifier_share"][:2] == [0, 50]
    assert three["pos"]["verb"][0] == 0 and three["jsd"]["topk_kept"][0][1] == 1  # disjoint top-3s
    assert analyses(result, k=1)["categories"]["answer"] == [0, 100, None]


def test_the_json_keeps_two_decimals_of_a_percentage_and_six_of_a_divergence():
    passage = [("a", "DT", [1, 1]), ("b", "NN", [1, 1]), ("c", "NN", [1, 2]), ("10", "CD", [0, 0]),
               ("20", "CD", [0, 0])]
    thirds = handmade([("How", "WRB"), ("many", "JJ"), ("b", "NN")], passage, explained=(1, 1))
    document = analyses(thirds, k=5)
    assert document["categories"]["answer"] == [33.33, 33.33] and document["pos"]["entity"] == [66.67, 66.67]
    assert document["jsd"]["full"][0][1] == round(jensenshannon([1, 1, 1, 0, 0], [1, 1, 2, 0, 0], base=2) ** 2, 6)
    assert document["quantifier_share"] == [0, 0]


def test_analysis_defaults_are_the_papers_top_5(result):
    distribution = passage_distribution(result)
    assert np.allclose(pos_shares(result, distribution)["verb"][:2], [20, 0])
    assert np.allclose(category_shares(result, distribution)["supporting"][:2], [80, 50])
    assert np.allclose(quantifier_share(result, distribution)[:2], [25, 50])
    assert [[w.text for w in row] for row in top_words(result, distribution)][0] == ["trees", "pear", "trees",
                                                                                     "has", "2,300"]


def test_the_json_analyses_write_undefined_values_as_null(result):
    document = analyses(result, k=5)
    assert document["top_k"][2] == [] and document["categories"]["answer"][2] is None
    assert document["jsd"]["full"][2] == [None, None, None] and document["quantifier_share"][2] is None
    assert document["categories"]["answer"][1] == 25 and document["pos"]["verb"][0] == 20
    assert document["passage_words"] == WORDS


def test_tsne_is_sklearns_with_the_seed_and_the_capped_perplexity_it_reports():
    from sklearn.manifold import TSNE

    vectors = np.random.default_rng(0).normal(size=(31, 8))
    projected = project(vectors, "tsne", seed=3)
    assert projected.perplexity == pytest.approx(10.0)  # the paper's 40, capped at (31 − 1) / 3
    reference = TSNE(n_components=2, perplexity=10.0, random_state=3, init="pca").fit_transform(vectors)
    assert np.allclose(projected.points, reference)
    assert project(vectors[:4], "tsne").perplexity == 1.0  # very short inputs: at least 1
    assert project(np.random.default_rng(1).normal(size=(200, 4)), "tsne").perplexity == 40.0
    with pytest.raises(ValueError, match="unknown projection"):
        project(vectors, "umap")


def test_ranks_break_ties_by_text_order():
    assert ranks(np.array([[0.2, 0.4, 0.2, 0.2]])).tolist() == [[2, 1, 3, 4]]
    assert [list(row) for row in top_k(np.array([[0.25, 0.25, 0.25, 0.25]]), 3)] == [[0, 1, 2]]


def test_variants_say_their_k():
    assert describe("topk_removed", 5) == "each layer's top-5 words removed"
    assert describe("topk_kept", 2) == "only each layer's top-2 words kept"
    assert describe("full", 5) == "whole distributions"


def test_token_groups_colour_the_explained_span_its_sentence_and_the_rest():
    from rcqa.analysis.projection import token_groups

    passage = [("Farms", "NNS", [1]), ("grow", "VBP", [1]), (".", ".", [0]), ("It", "PRP", [1]), ("has", "VBZ", [1]),
               ("600", "CD", [1]), ("pears", "NNS", [1]), ("!", ".", [0]), ("Rain", "NN", [1]), ("falls", "VBZ", [1])]
    result = handmade([("How", "WRB"), ("many", "JJ")], passage, explained=(5, 5), predicted=(8, 8))
    groups = token_groups(result)
    assert groups[0] == "[CLS]/[SEP]" and groups[1:3] == ["question", "question"] and groups[3] == "[CLS]/[SEP]"
    # passage tokens: Farms grow . | It has 600 pears ! | Rain falls, then [SEP]
    assert groups[4:] == ["other", "other", "other", "answer sentence", "answer sentence", "answer",
                          "answer sentence", "answer sentence", "other", "other", "[CLS]/[SEP]"]


def test_ties_keep_text_order_however_many_words_tie():
    flat = np.full((1, 40), 0.025)
    assert ranks(flat)[0].tolist() == list(range(1, 41))
    assert top_k(flat, 40)[0].tolist() == list(range(40))


def test_a_layer_whose_scores_sum_below_one_is_still_a_distribution():
    passage = [("small", "JJ", [0.2]), ("scores", "NNS", [0.3]), ("here", "RB", [0.0])]
    result = handmade([("What", "WP")], passage, explained=(0, 0))
    assert np.allclose(passage_distribution(result), [[0.4, 0.6, 0.0]])
    assert np.allclose(distribution(result, [0, 1]), [[0.0, 1.0]])  # the question word "What", and "small"
    assert np.allclose(word_scores(result)[0], [0.0, 0.2, 0.3, 0.0])


def test_a_word_touching_the_span_is_not_inside_it():
    passage = [("I", "PRP", [1]), ("ran", "VBD", [1]), ("10", "CD", [1]), ("km", "NNS", [1]), ("today", "NN", [1])]
    ten = handmade([("How", "WRB"), ("far", "RB")], passage, explained=(2, 2), passage_text="I ran 10km today")
    assert list(category_masks(ten)["answer"]) == [False, False, True, False, False]
    km = handmade([("How", "WRB"), ("far", "RB")], passage, explained=(3, 3), passage_text="I ran 10km today")
    assert list(category_masks(km)["answer"]) == [False, False, False, True, False]
    assert list(category_masks(km)["supporting"]) == [True, True, True, False, True]


def test_pca_axes_say_how_much_variance_each_component_holds():
    corners = np.array(list(itertools.product([-1, 1], repeat=3))) * [1.0, 3.0, 2.0]  # variances 1 : 9 : 4
    projected = project(corners.astype(int), "pca")
    assert projected.axes == ("Principal component 1 (64% of variance)", "Principal component 2 (29% of variance)")
    assert np.allclose(np.abs(projected.points), [3.0, 2.0])
    assert np.allclose(np.abs(project(corners + 5.0, "pca").points), np.abs(projected.points))  # centred first
    assert projected.perplexity is None


def test_tsne_is_the_default_map_with_seed_0():
    from sklearn.manifold import TSNE

    vectors = np.random.default_rng(2).normal(size=(16, 5))
    reference = TSNE(n_components=2, perplexity=5.0, random_state=0, init="pca").fit_transform(vectors)
    assert np.allclose(project(vectors).points, reference) and project(vectors).axes == ("t-SNE 1", "t-SNE 2")


def test_a_second_target_reads_its_own_scores(result):
    import dataclasses

    two = dataclasses.replace(result, targets=result.targets * 2,
                              scores=np.concatenate([result.scores, result.scores[:, :, ::-1]]))
    assert np.allclose(passage_distribution(two, target=1), passage_distribution(result)[::-1])
    assert np.allclose(word_scores(two, target=1), word_scores(result)[::-1])
    assert analyses(two, target=1)["categories"]["answer"] == [None, 25, 0]


def test_jsd_is_undefined_whichever_side_has_no_distribution(result):
    distribution = passage_distribution(result)
    assert math.isnan(jensen_shannon(distribution[2], distribution[0]))


def test_a_null_target_gives_the_rejected_best_span_the_answer_category_and_says_so(result):
    from dataclasses import replace

    from rcqa.analysis.roles.categories import category_labels
    from rcqa.types import NoAnswer

    assert category_labels(result) == {"answer": "answer", "supporting": "supporting", "query": "query"}
    abstained = replace(result, targets=[replace(result.targets[0], name="null", null_token=0)],
                        answer=replace(result.answer, no_answer=NoAnswer(5.0, 0.7, 0.0, True, 0, 2.0)))
    assert list(category_masks(abstained)["answer"]) == marked(9)  # "600", the span the model rejected
    assert category_labels(abstained)["answer"] == "answer (the rejected best span)"
    answered = replace(abstained, answer=replace(result.answer, no_answer=NoAnswer(1.0, 0.1, 0.0, False, 0, 2.0)))
    assert category_labels(answered)["answer"] == "answer (the best span, chosen over no answer)"
    # the phases read it so too, in the JSON and on the roles tab
    from rcqa.figures.roles import role_readings

    assert all("settling on and verifying the answer" not in p["reading"] for p in analyses(abstained)["phases"])
    assert [text for _, text in role_readings(abstained)] == [p["reading"] for p in analyses(abstained)["phases"]]
    assert [text for _, text in role_readings(result)] == [p["reading"] for p in analyses(result)["phases"]]
    assert any("reading the context around the best span" in p["reading"] for p in analyses(abstained)["phases"])
