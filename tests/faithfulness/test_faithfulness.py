"""Faithfulness: ERASER's and Samek's numbers worked out by hand on a handmade comparison, the deletion operators
against independent forwards of hand-built inputs, and the properties a deletion test must have."""
import dataclasses
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from rcqa.attribution.explanation import explain
from rcqa.attribution.methods import Case, make_method, word_scores
from rcqa.attribution.methods.layer_embeddings import LayerEmbeddings
from rcqa.attribution.settings import ExplainSettings
from rcqa.faithfulness.compare import Protocol, compare
from rcqa.faithfulness.deletion import _variants, reanswer
from rcqa.faithfulness.document import FaithfulnessReport
from rcqa.faithfulness.metrics import (
    aopc,
    aopc_bounds,
    comprehensiveness,
    normalised_aopc,
    fraction_count,
    rank_correlations,
    reading,
    spread,
    sufficiency,
)
from rcqa.faithfulness.report import faithfulness_report, readings
from rcqa.gallery import gallery_example
from rcqa.spans import Windows, decode
from tests.helpers.handmade_comparison import handmade_comparison

# --- the numbers, by hand --------------------------------------------------------------------------------------


def test_aopc_comprehensiveness_and_sufficiency_by_hand():
    # the curve over k = 0..3: drops 0, .3, .5, .7 → AOPC = 1.5 / 4
    assert aopc(0.8, [0.8, 0.5, 0.3, 0.1]) == pytest.approx(0.375)
    # ERASER: the top 1, 5, 10, 20, 50 % deleted → drops .1, .3, .5, .6, .7 → 2.2 / 5
    assert comprehensiveness(0.8, [0.7, 0.5, 0.3, 0.2, 0.1]) == pytest.approx(0.44)
    # only those kept → drops .6, .4, .2, .1, 0 → 1.3 / 5
    assert sufficiency(0.8, [0.2, 0.4, 0.6, 0.7, 0.8]) == pytest.approx(0.26)


# p(span) with each set of three features deleted; drops: {0} .4, {1} .1, {2} .2, {0,1} .5, {0,2} .8, {1,2} .3, all .9
TOY = {frozenset(): 1.0, frozenset({0}): 0.6, frozenset({1}): 0.9, frozenset({2}): 0.8, frozenset({0, 1}): 0.5,
       frozenset({0, 2}): 0.2, frozenset({1, 2}): 0.7, frozenset({0, 1, 2}): 0.1}


def toy_probabilities(sets):
    return [TOY[s] for s in sets]


def test_aopc_bounds_and_normalised_aopc_by_hand():
    # the six orderings' summed drops over k = 1..3: 012 1.8, 021 2.1, 102 1.5, 120 1.3, 201 1.9, 210 1.4 (÷ 4)
    for beam in (1, 6):
        assert aopc_bounds(1.0, toy_probabilities, [0, 1, 2], 3, beam) == pytest.approx((1.3 / 4, 2.1 / 4))
    assert aopc(1.0, [1.0, 0.6, 0.5, 0.1]) == pytest.approx(1.8 / 4)  # the ordering 0, 1, 2
    assert normalised_aopc(1.8 / 4, 1.3 / 4, 2.1 / 4) == pytest.approx(0.5 / 0.8)
    # only k = 0..2: 01 .9, 02 1.2, 10 .6, 12 .4, 20 1.0, 21 .5 (÷ 3)
    assert aopc_bounds(1.0, toy_probabilities, [0, 1, 2], 2, 1) == pytest.approx((0.4 / 3, 1.2 / 3))
    assert normalised_aopc(0.3, 0.3, 0.3) is None  # every ordering alike: nothing to normalise by


def brute_force_bounds(original, probability, features, k):
    """AOPC over k = 0..k of every ordering of the features (all N! of them), least and greatest."""
    values = [aopc(original, [probability(frozenset(order[:c])) for c in range(k + 1)])
              for order in itertools.permutations(features)]
    return min(values), max(values)


def test_the_beam_search_finds_the_bounds_of_every_ordering_when_its_beam_holds_every_prefix():
    rng = np.random.default_rng(3)
    narrower = 0
    for _ in range(20):
        table = {frozenset(s): rng.uniform() for r in range(6) for s in itertools.combinations(range(5), r)}
        table[frozenset()] = 0.9

        def probabilities(sets):
            return [table[s] for s in sets]

        exact = brute_force_bounds(0.9, table.__getitem__, range(5), 3)
        assert aopc_bounds(0.9, probabilities, list(range(5)), 3, beam=5 * 4 * 3) == pytest.approx(exact)
        low, high = aopc_bounds(0.9, probabilities, list(range(5)), 3, beam=1)
        assert exact[0] <= low + 1e-12 and high <= exact[1] + 1e-12  # a bound found is one ordering's AOPC
        narrower += low > exact[0] + 1e-9 or high < exact[1] - 1e-9
    assert narrower  # greedy search does miss the extremes: these cases tell a beam of one from an exhaustive one


def test_the_beam_search_asks_each_set_once_per_step():
    asked = []
    aopc_bounds(1.0, lambda sets: asked.append(sets) or toy_probabilities(sets), [0, 1, 2], 3, 2)
    assert all(len(batch) == len(set(batch)) for batch in asked) and len(asked) == 3


@pytest.mark.parametrize("fraction, words, count", [(0.01, 217, 3), (0.07, 100, 7), (0.5, 1, 1), (0.01, 10, 1),
                                                    (0.2, 10, 2), (0.5, 217, 109)])
def test_a_fraction_of_the_passage_is_rounded_up_to_whole_words(fraction, words, count):
    assert fraction_count(fraction, words) == count


def test_spread_of_the_draws_by_hand():
    found = spread(np.array([[1.0, 2.0], [3.0, 6.0]]))
    assert found["mean"] == [2.0, 4.0] and found["min"] == [1.0, 2.0] and found["max"] == [3.0, 6.0]
    assert np.allclose(found["std"], [math.sqrt(2), math.sqrt(8)])  # ddof 1: ((1−2)² + (3−2)²) / 1 = 2


def test_rank_correlations_by_hand():
    found = rank_correlations({"a": np.array([1.0, 2, 3, 4]), "b": np.array([1.0, 3, 2, 4]),
                               "flat": np.zeros(4)})
    # one swap of neighbours: Σd² = 2 → ρ = 1 − 6·2 / (4·15) = 0.8; 5 concordant and 1 discordant pairs → τ = 4/6
    assert found["spearman"][0][1] == pytest.approx(0.8) and found["kendall"][1][0] == pytest.approx(4 / 6)
    assert found["spearman"][0][0] == 1.0 and found["spearman"][0][2] is None  # a flat score ranks nothing


def test_the_reading_says_what_the_numbers_say():
    # p 80 % → 20 % for the method; random draws end at 70 %, 60 %, 80 % (mean 70 %): drops .6 and .1 → 6.0×
    text = reading(5, 0.8, 0.2, np.array([0.7, 0.6, 0.8]))
    assert text == ("Deleting its top-5 words lowers the answer's probability from 80% to 20%: 6.0× the drop of "
                    "random deletion (random deletion of 5 words takes it to 70% on average over 3 draws); lower "
                    "than every random draw.")
    within = reading(1, 0.8, 0.65, np.array([0.7, 0.6]))  # .15 over .15: 1.0×, and 65 % is inside 60–70 %
    assert "1.0× the drop" in within and "within the random draws' range (60%–70%), so no better than random" in within
    assert reading(2, 0.5, 0.6, np.array([0.4, 0.4])).startswith(
        "Deleting its top-2 words does not lower the answer's probability (50% → 60%)")
    assert "while random deletion does not lower it (55% on average over 2 draws)" in reading(
        3, 0.5, 0.1, np.array([0.5, 0.6]))
    assert "to under 0.01%" in reading(3, 0.5, 1e-7, np.array([0.4, 0.3]))
    # probabilities that differ are written apart: 68.04 % and 67.98 % are not "68% to 68%"
    assert "from 68.04% to 67.98%" in reading(5, 0.6804, 0.6798, np.array([0.68, 0.6801]))


def test_a_summary_reading_places_the_number_among_randoms_draws_either_way():
    from rcqa.faithfulness.metrics import summary_reading

    draws = np.array([0.052, 0.122, 0.09])
    # the case: a comprehensiveness under every random draw is worse than random, whatever k = 5 said
    assert summary_reading("comprehensiveness", 0.040, draws, True) == (
        "Its comprehensiveness is 0.040, below every random draw's (0.052–0.122 over 3 draws): by this measure, worse "
        "than random.")
    assert summary_reading("sufficiency", 0.040, draws, False).endswith("better than random.")
    assert summary_reading("AOPC", 0.1, draws, True).endswith("within the range of the random draw's (0.052–0.122 "
                                                              "over 3 draws): by this measure, no better than random.")


# --- a comparison built by hand (tests/helpers/handmade_comparison.py) --------------------------------------------


def test_the_report_of_a_handmade_comparison_holds_the_numbers_worked_out_by_hand():
    report = faithfulness_report(handmade_comparison())
    method = report.methods["gradient"]
    assert method.deletion.k == [0, 1, 2, 3]
    assert method.deletion.span_probability == pytest.approx([0.8, 0.5, 0.3, 0.2])
    assert method.deletion.flipped == [False, True, True, True]
    assert method.deletion.f1 == [1.0, 0.0, 0.0, 0.0]
    assert method.deletion_by_fraction.k == [2] and method.deletion_by_fraction.span_probability == [0.3]
    assert method.summaries["aopc"] == pytest.approx((0 + 0.3 + 0.5 + 0.6) / 4)
    # top 1 and top 5 deleted: .5 and .1; only they kept: .6 and .7
    assert method.summaries["comprehensiveness"] == pytest.approx((0.3 + 0.7) / 2)
    assert method.summaries["sufficiency"] == pytest.approx((0.2 + 0.1) / 2)
    random = report.random
    assert random.deletion.span_probability.mean == pytest.approx([0.8, 0.7, 0.6, 0.5])
    assert random.deletion.span_probability.min == pytest.approx([0.8, 0.6, 0.5, 0.4])
    assert random.deletion.flipped.mean == [0, 0, 0, 0.5]  # one draw of two moved the answer at k = 3
    assert random.deletion.f1.mean == pytest.approx([1, 1, 1, (2 / 3 + 1) / 2])  # "w3 w4" against "w3"
    # (0 + 0 + .1 + .2) / 4, (0 + .2 + .3 + .4) / 4
    assert random.summaries["aopc"].draws == pytest.approx([0.075, 0.225])
    assert random.summaries["aopc"].std == pytest.approx(0.15 / math.sqrt(2))
    assert random.summaries["comprehensiveness"].mean == pytest.approx(((0 + 0.3) / 2 + (0.2 + 0.5) / 2) / 2)
    assert random.summaries["sufficiency"].mean == pytest.approx(((0.6 + 0.4) / 2 + (0.7 + 0.5) / 2) / 2)
    versus = method.versus_random
    assert versus.drop_ratio == pytest.approx([None, 3.0, 2.5, 2.0])  # .3/.1, .5/.2, .6/.3; none at k = 0
    assert versus.below_every_random_draw == [False, True, True, True]
    assert versus.aopc_minus_random == pytest.approx(0.35 - 0.15)
    assert versus.reading.startswith("Deleting its top-3 words lowers the answer's probability from 80% to 20%: "
                                     "2.0× the drop")
    assert report.rank_correlation["spearman"][0][1] == pytest.approx(-1.0)
    assert report.rank_correlation["kendall"][0][1] == pytest.approx(-1.0)
    assert readings(handmade_comparison())["gradient"] == f"{versus.reading} {versus.comprehensiveness_reading}"
    # comprehensiveness .5 against random's draws .15 and .35: the table's number, placed among random's
    assert versus.comprehensiveness_reading.startswith("Its comprehensiveness (")
    assert "is 0.500, above every random draw's (0.150–0.350 over 2 draws): by this measure, better than random." \
        in versus.comprehensiveness_reading
    assert report.aopc_bounds is None and method.summaries["naopc"] is None and random.summaries["naopc"] is None


def test_normalised_aopc_of_a_handmade_comparison_by_hand():
    # AOPCs: gradient .35, attention_tracing 0 (nothing it deletes moves p), random draws .075 and .225
    searched = faithfulness_report(dataclasses.replace(handmade_comparison(), aopc_bounds=(0.0, 0.5)))
    assert searched.aopc_bounds == {"lower": 0.0, "upper": 0.5}
    assert searched.methods["gradient"].summaries["naopc"] == pytest.approx(0.7)
    random_naopc = searched.random.summaries["naopc"]
    assert random_naopc is not None and random_naopc.draws == pytest.approx([0.15, 0.45])
    # a beam that missed orderings the rankings reached is widened to them: here up to gradient's .35
    narrow = faithfulness_report(dataclasses.replace(handmade_comparison(), aopc_bounds=(0.05, 0.3)))
    assert narrow.aopc_bounds == pytest.approx({"lower": 0.0, "upper": 0.35})
    assert narrow.methods["gradient"].summaries["naopc"] == pytest.approx(1.0)
    assert narrow.methods["attention_tracing"].summaries["naopc"] == pytest.approx(0.0)


# the JSON text `faithfulness --json` wrote of the handmade comparison with AOPC's bounds searched as 0 … 0.5, written
# by rcqa.faithfulness.report before the document was typed (json.dumps, ensure_ascii=False)
HANDMADE_REPORT = Path(__file__).resolve().parents[1] / "data" / "handmade_faithfulness_report.json"


def test_the_typed_report_writes_the_text_the_untyped_document_wrote():
    written = HANDMADE_REPORT.read_text(encoding="utf-8")
    report = faithfulness_report(dataclasses.replace(handmade_comparison(), aopc_bounds=(0.0, 0.5)))
    assert report.to_json() == written
    loaded = FaithfulnessReport.load(HANDMADE_REPORT)
    assert loaded == report and loaded.to_json() == written
    assert loaded.header.example.id == "toy" and loaded.original.span_probability == 0.8 and loaded.sanity is None


def test_a_file_that_holds_no_report_is_refused_in_one_sentence(tmp_path):
    path = tmp_path / "comparison.json"
    path.write_text(json.dumps(handmade_comparison().to_dict()))  # a saved Comparison: its methods are a list
    with pytest.raises(ValueError, match="^comparison.json does not hold a FaithfulnessReport"):
        FaithfulnessReport.load(path)


# --- the deletion operators, on a real (tiny) model ------------------------------------------------------------


@pytest.fixture(scope="module")
def case(tiny_bert):
    return Case.of(tiny_bert, gallery_example("lighthouse-when"))


def span_probability(case, inputs: dict, start: int, end: int) -> float:
    """p(start) · p(end) from one unpadded forward of the model: the reference the batched re-answers must meet."""
    with torch.no_grad():
        output = case.qa_model.model(**inputs)
    return float(output.start_logits[0].softmax(-1)[start] * output.end_logits[0].softmax(-1)[end])


def tokens_of(case, words) -> list[int]:
    return [t for index in words for t in case.passage_words()[index].tokens]


@pytest.mark.parametrize("operator", ["pad", "remove"])
def test_deleting_nothing_leaves_the_probability_unchanged(case, operator):
    (nothing,) = reanswer(case, [()], operator)
    assert nothing.span_probability == pytest.approx(span_probability(case, case.window.inputs, *case.target_positions),
                                                     rel=1e-5)
    assert nothing.answer == (case.window.answer.best.start_char, case.window.answer.best.end_char)


def test_pad_deletion_equals_a_forward_with_pad_ids_in_place(case):
    chosen = (0, 2, 5)
    ids = case.window.inputs["input_ids"].clone()
    ids[0, tokens_of(case, chosen)] = case.qa_model.tokenizer.pad_token_id
    expected = span_probability(case, {**case.window.inputs, "input_ids": ids}, *case.target_positions)
    _, padded = reanswer(case, [(), chosen], "pad")
    assert padded.span_probability == pytest.approx(expected, rel=1e-5)


def test_mask_deletion_equals_a_forward_with_the_tokenizers_mask_id_in_place(case):
    chosen = (0, 2, 5)
    mask_id = case.qa_model.tokenizer.convert_tokens_to_ids("[MASK]")  # the BERT vocabulary's own mask token
    ids = case.window.inputs["input_ids"].clone()
    ids[0, tokens_of(case, chosen)] = mask_id
    expected = span_probability(case, {**case.window.inputs, "input_ids": ids}, *case.target_positions)
    _, masked = reanswer(case, [(), chosen], "mask")
    _, padded = reanswer(case, [(), chosen], "pad")
    assert masked.span_probability == pytest.approx(expected, rel=1e-5)
    assert masked.span_probability != pytest.approx(padded.span_probability, rel=1e-3)  # another operator


def test_the_mask_operator_falls_back_to_the_unknown_token_and_refuses_a_tokenizer_without_either():
    from types import SimpleNamespace

    from rcqa.faithfulness.deletion import replacement_id

    assert replacement_id(SimpleNamespace(pad_token_id=0, mask_token_id=None, unk_token_id=7), "mask") == 7
    assert replacement_id(SimpleNamespace(pad_token_id=0, mask_token_id=4, unk_token_id=7), "mask") == 4
    with pytest.raises(ValueError, match="neither"):
        replacement_id(SimpleNamespace(pad_token_id=0, mask_token_id=None, unk_token_id=None), "mask")


def test_removal_equals_a_forward_of_the_shorter_input_however_the_batch_is_padded(case):
    chosen = (0, 2, 5)  # before the span: it moves up by the removed tokens
    gone = tokens_of(case, chosen)
    keep = [t for t in range(case.length) if t not in gone]
    shorter = {name: values[:, keep] for name, values in case.window.inputs.items()}
    start, end = (keep.index(t) for t in case.target_positions)
    _, removed = reanswer(case, [(), chosen], "remove")  # the first variant is longer: the second is padded
    assert removed.span_probability == pytest.approx(span_probability(case, shorter, start, end), rel=1e-5)


def test_removal_batches_inputs_of_about_one_length_and_answers_in_the_order_asked(case, monkeypatch):
    deletions = [(), tuple(range(8)), (1,), tuple(range(6)), (0, 2)]
    alone = [reanswer(case, [chosen], "remove")[0] for chosen in deletions]
    lengths = []  # per batch, its inputs' lengths

    def recorded(*arguments):
        batch, positions = _variants(*arguments)
        lengths.append(batch["attention_mask"].sum(dim=1).tolist())
        return batch, positions

    monkeypatch.setattr("rcqa.faithfulness.deletion._variants", recorded)
    batched = reanswer(case, deletions, "remove", batch_size=2)
    assert [length for batch in lengths for length in batch] == sorted(case.length - len(tokens_of(case, chosen))
                                                                       for chosen in deletions)[::-1]
    assert [r.answer for r in batched] == [r.answer for r in alone]
    assert [r.span_probability for r in batched] == pytest.approx([r.span_probability for r in alone], rel=1e-5)


def test_a_batch_out_of_memory_is_halved_and_answers_the_same(case, monkeypatch):
    deletions = [(), (1,), (0, 2), (3,), (4, 5)]
    alone = reanswer(case, deletions, "pad", batch_size=1)
    sizes = []

    def small_memory(*arguments):
        batch, positions = _variants(*arguments)
        if len(positions) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (faked)")
        sizes.append(len(positions))
        return batch, positions

    monkeypatch.setattr("rcqa.faithfulness.deletion._variants", small_memory)
    batched = reanswer(case, deletions, "pad", batch_size=4)
    assert max(sizes) <= 2 and sum(sizes) == len(deletions)
    assert [r.answer for r in batched] == [r.answer for r in alone]
    assert [r.span_probability for r in batched] == pytest.approx([r.span_probability for r in alone], rel=1e-5)


@pytest.mark.parametrize("operator", ["pad", "remove"])
def test_the_reanswer_is_the_best_answer_decoded_from_a_forward_of_the_variant_alone(case, operator):
    chosen = (0, 2, 5)  # before the span, so that its words stay whole
    gone = set(tokens_of(case, chosen))
    keep = [t for t in range(case.length) if operator == "pad" or t not in gone]
    ids = case.window.inputs["input_ids"].clone()
    ids[0, sorted(gone)] = case.qa_model.tokenizer.pad_token_id
    variant = {name: values[:, keep] for name, values in {**case.window.inputs, "input_ids": ids}.items()}
    with torch.no_grad():
        output = case.qa_model.model(**variant)
    answerable = [case.window.segments[t] == "passage" and t not in gone for t in keep]
    windows = Windows(inputs={}, offsets=[[case.window.offsets[t] for t in keep]],
                      passage_mask=torch.tensor([answerable]))
    best = decode(output.start_logits, output.end_logits, windows, case.example.passage)[0]
    _, reanswered = reanswer(case, [(), chosen], operator)
    assert reanswered.answer == (best.start_char, best.end_char)


@pytest.mark.parametrize("operator", ["pad", "remove"])
def test_deleting_every_passage_word_leaves_no_answer(case, operator):
    (everything,) = reanswer(case, [range(len(case.passage_words()))], operator)
    assert everything.answer is None and everything.text == ""
    if operator == "remove":
        assert everything.span_probability == 0.0  # the span's tokens are gone


def test_a_deleted_answer_word_is_not_answered_with(case):
    span = [i for i, w in enumerate(case.passage_words()) if set(w.tokens) & set(case.target_positions)]
    (without_answer,) = reanswer(case, [span], "pad")
    assert without_answer.answer != (case.window.answer.best.start_char, case.window.answer.best.end_char)


def test_protocol_is_checked():
    with pytest.raises(ValueError, match="operator"):
        Protocol(operator="replace")
    with pytest.raises(ValueError, match="draws"):
        Protocol(draws=0)
    with pytest.raises(ValueError, match="naopc_beam"):
        Protocol(naopc_beam=-1)
    with pytest.raises(ValueError, match="fractions"):
        Protocol(bins=(0.0, 0.5))


@pytest.fixture(scope="module")
def comparison(tiny_bert):
    return compare(tiny_bert, gallery_example("lighthouse-when"), protocol=Protocol(k=4, draws=3, seed=7))


def test_random_rankings_come_from_the_seeded_draws_and_repeat(comparison, tiny_bert, case):
    deletable = np.array(comparison.deletable)  # the answer's words spared, by default
    assert len(deletable) < len(case.passage_words())
    for draw, seed in enumerate((7, 8, 9)):
        scores = word_scores(make_method("random", seed=seed).attribute(case)["random"], case.passage_words())[deletable]
        assert comparison.random.deletions[draw].ranking == tuple(deletable[np.argsort(-scores, kind="stable")])
    again = compare(tiny_bert, gallery_example("lighthouse-when"), ["gradient"], Protocol(k=4, draws=3, seed=7))
    assert [d.ranking for d in again.random.deletions] == [d.ranking for d in comparison.random.deletions]
    assert len({d.ranking for d in comparison.random.deletions}) == 3


def test_every_curve_starts_at_the_original_answer_and_deletes_each_rankings_top_words(comparison, case):
    p0 = comparison.original.span_probability
    for result in comparison.methods.values():
        for deletion in result.deletions:
            assert deletion.without_top[0].span_probability == p0
            chosen = deletion.ranking[:3]
            (expected,) = reanswer(case, [chosen], "pad")
            assert deletion.without_top[3] == expected


def test_by_default_the_answers_words_are_spared_and_the_old_protocol_deletes_them(tiny_bert):
    spared = compare(tiny_bert, gallery_example("lighthouse-when"), ["gradient"], Protocol(k=3, draws=2))
    start, end = spared.span_chars
    answer_words = {i for i, w in enumerate(spared.words) if w.start_char < end and start < w.end_char}
    assert answer_words and not answer_words & set(spared.deletable)
    assert all(not answer_words & set(d.ranking) for r in spared.methods.values() for d in r.deletions)
    deleted = compare(tiny_bert, gallery_example("lighthouse-when"), ["gradient"],
                      Protocol(k=3, draws=2, spare_answer=False))
    assert deleted.deletable == list(range(len(deleted.words)))


def test_the_searched_bounds_are_those_of_every_ordering_of_the_deletable_words(tiny_bert, case):
    # over k = 0..1 a curve is set by its first word: the bounds are the least and greatest drop of one word, ÷ 2
    found = compare(tiny_bert, gallery_example("lighthouse-when"), ["gradient"], Protocol(k=1, draws=2, naopc_beam=1))
    p0 = found.original.span_probability
    drops = [p0 - r.span_probability for r in reanswer(case, [(w,) for w in found.deletable])]
    assert found.aopc_bounds == pytest.approx((min(drops) / 2, max(drops) / 2), rel=1e-6)
    report = faithfulness_report(found)
    assert 0 <= report.methods["gradient:magnitude"].summaries["naopc"] <= 1 and report.protocol.naopc_beam == 1


def test_igs_scores_from_the_layer_wise_explanation_are_those_the_method_computes(tiny_bert, monkeypatch):
    example, settings = gallery_example("lighthouse-when"), ExplainSettings()
    result = explain(tiny_bert, example, settings)
    embeddings = {"signed": result.layer_scores("sum")[0], "magnitude": result.layer_scores("l2_squared")[0]}
    protocol = Protocol(k=3, draws=2)
    ig = "integrated_gradients"
    computed = compare(tiny_bert, example, [ig], protocol, settings)
    monkeypatch.setattr(LayerEmbeddings, "attribute", lambda self, case: pytest.fail("IG was computed again"))
    reused = compare(tiny_bert, example, [ig], protocol, settings, known={ig: embeddings})
    for entry in ("integrated_gradients:signed", "integrated_gradients:magnitude"):
        assert np.allclose(reused.methods[entry].scores[0], computed.methods[entry].scores[0], rtol=1e-5, atol=1e-7)
        assert reused.methods[entry].deletions == computed.methods[entry].deletions


def test_a_magnitude_ranking_says_which_of_its_top_words_its_own_signed_score_puts_against_the_answer():
    from dataclasses import replace as replaced

    from rcqa.faithfulness.report import against_the_answer, readings
    from tests.helpers.handmade_comparison import handmade_comparison

    comparison = handmade_comparison()
    magnitude = comparison.methods.pop("gradient")
    signed_scores = np.arange(10.0)
    signed_scores[[4, 0]] = -1.0  # w4 and w0, the magnitude ranking's 2nd and 3rd words, speak against the answer
    comparison.methods = {
        "gradient_x_input:magnitude": replaced(magnitude, name="gradient_x_input:magnitude", method="gradient_x_input",
                                               ranked_by="magnitude"),
        "gradient_x_input:signed": replaced(magnitude, name="gradient_x_input:signed", method="gradient_x_input",
                                            ranked_by="signed", word_scores=[signed_scores]),
        **comparison.methods}
    sentence = against_the_answer(comparison, comparison.methods["gradient_x_input:magnitude"])
    assert sentence.startswith("2 of its top-3 words (w4, w0) speak against the answer")  # reading k = 3 here
    assert sentence in readings(comparison)["gradient_x_input:magnitude"]
    assert against_the_answer(comparison, comparison.methods["gradient_x_input:signed"]) == ""
    assert against_the_answer(comparison, comparison.methods["attention_tracing"]) == ""  # no signed score to tell
