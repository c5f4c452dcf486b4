"""Leave one sentence out (issue 55) on the default model: each sentence's value equals a re-answer run by hand on
the passage with that sentence deleted, read from the model's own n-best list; the sentence holding the answer
takes it away."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rcqa import qa
from rcqa.faithfulness.sentences.ablation import leave_one_sentence_out
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from tests.helpers.lighthouse import SENTENCES



@pytest.fixture(scope="module")
def lighthouse():
    example = gallery_example("lighthouse-when")
    assert example.passage == " ".join(SENTENCES)
    return example


def probability_in_nbest(qa_model, passage: str, question: str, text: str) -> float:
    """The n-best list's probability of the answer with this text (0 when it is not among the 20 best)."""
    spans = qa.answer(qa_model, passage, question, n_best=20).nbest
    return next((span.probability for span in spans if span.text == text), 0.0)


@pytest.mark.parametrize("question, answer, holding", [
    ("When was the lighthouse first lit?", "1872", 0),  # the first sentence: nothing before it moves
    ("Who was the last keeper?", "Thomas Reid", 3),  # the last: every deletion before it moves its characters
])
def test_each_sentence_left_out_equals_a_re_answer_by_hand(lighthouse, question, answer, holding):
    qa_model = load_model()
    example = dataclasses.replace(lighthouse, question=question)
    start = example.passage.index(answer)
    ablation = leave_one_sentence_out(qa_model, example, (start, start + len(answer)))
    assert [example.passage[a:b] for a, b in ablation.sentences] == SENTENCES
    assert ablation.answer == answer
    assert ablation.probability == pytest.approx(probability_in_nbest(qa_model, example.passage, question, answer),
                                                 abs=1e-6)
    assert ablation.probability > 0.5
    assert ablation.without[holding] == 0.0  # the sentence that holds the answer takes it away
    for deleted in set(range(4)) - {holding}:
        by_hand = " ".join(s for i, s in enumerate(SENTENCES) if i != deleted)
        assert ablation.without[deleted] == pytest.approx(probability_in_nbest(qa_model, by_hand, question, answer),
                                                          abs=1e-6)
        assert ablation.without[deleted] > 0  # the answer is still there to be read
    assert ablation.drops[holding] == pytest.approx(ablation.probability)


def test_the_surrogate_recovers_known_weights_and_says_how_well_it_fits():
    from rcqa.faithfulness.sentences.ablation import fit_surrogate

    rng = np.random.default_rng(1)
    masks = rng.integers(0, 2, size=(64, 5)).astype(float)
    truth = np.array([2.0, 0.0, -1.0, 0.0, 0.5])  # a linear model of which sentences are kept
    outcomes = masks @ truth + 0.3
    weights, intercept, r2 = fit_surrogate(masks, outcomes, held_out=16, alpha=0.001)
    assert np.allclose(weights, truth, atol=0.02) and abs(intercept - 0.3) < 0.02 and r2 > 0.99
    _, _, noise_r2 = fit_surrogate(masks, rng.normal(size=64), held_out=16)
    assert noise_r2 < 0.2  # outcomes no mask explains: the held-out R² says so


def test_context_cite_on_the_lighthouse_weighs_the_answers_sentence_apart(lighthouse):
    from rcqa.faithfulness.sentences.ablation import context_cite

    example = dataclasses.replace(lighthouse, question="Who was the last keeper?")
    start = example.passage.index("Thomas Reid")
    surrogate = context_cite(load_model(), example, (start, start + len("Thomas Reid")), ablations=24, held_out=8)
    assert len(surrogate.weights) == 4 and surrogate.weights[3] == 0.0  # always kept: no variance to weigh
    assert surrogate.ablations == 24 and np.isfinite(surrogate.held_out_r2)


def test_a_surrogates_ablation_reads_the_answer_as_a_re_answer_by_hand(lighthouse):
    from rcqa.faithfulness.sentences.ablation import probability_without

    qa_model = load_model()
    example = dataclasses.replace(lighthouse, question="Who was the last keeper?")
    start = example.passage.index("Thomas Reid")
    spans = [(example.passage.index(s), example.passage.index(s) + len(s)) for s in SENTENCES]
    by_hand = " ".join([SENTENCES[0], SENTENCES[3]])  # the second and third deleted
    assert probability_without(qa_model, example, [spans[1], spans[2]], (start, start + 11)) == pytest.approx(
        probability_in_nbest(qa_model, by_hand, example.question, "Thomas Reid"), abs=1e-6)
    assert probability_without(qa_model, example, [spans[3]], (start, start + 11)) == 0.0


def test_the_check_reads_the_context_sentences_as_scipy_and_the_ablation_do(lighthouse):
    """The answer is in the fourth sentence, so the context is the first three: the check's ρ is scipy's over their
    |score| and their drops, its top-1 match and top sentence's drop are read at the argmax by hand, and a random
    sentence's drop is the mean of the three."""
    from scipy.stats import spearmanr

    from rcqa.attribution.explanation import explain
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.faithfulness.sentences import context_cite, sentence_check

    qa_model = load_model()
    example = dataclasses.replace(lighthouse, question="Who was the last keeper?")
    start = example.passage.index("Thomas Reid")
    ablation = leave_one_sentence_out(qa_model, example, (start, start + 11))
    surrogate = context_cite(qa_model, example, (start, start + 11), ablations=16, held_out=4)
    result = explain(qa_model, example, ExplainSettings(method="attnlrp", targets=("span_logits",)))
    found = sentence_check(result, ablation, surrogate)
    scores = result.granularity("sentence")
    context = np.abs(scores.scores[:, scores.passage_units()[:3]])
    drops, weights = ablation.drops[:3], np.asarray(surrogate.weights[:3])
    assert found.context_sentences == 3
    assert found.random_drop == pytest.approx(drops.mean()) and found.random_value("top1_leave_one_out") == 1 / 3
    for layer, row in enumerate(context):
        with np.errstate(invalid="ignore"):
            expected = spearmanr(row, drops).statistic, spearmanr(row, weights).statistic  # NaN: a side constant
        for got, wanted in zip((found.rho_leave_one_out[layer], found.rho_surrogate[layer]), expected):
            assert got is None if np.isnan(wanted) else got == pytest.approx(wanted)
        if not row.any():  # a layer that scores no context sentence names no top one
            assert found.top1_leave_one_out[layer] is None and found.top_sentence_drop[layer] is None
            continue
        assert found.top1_leave_one_out[layer] == float(np.argmax(row) == np.argmax(drops))
        assert found.top_sentence_drop[layer] == pytest.approx(drops[np.argmax(row)])
    assert sentence_check(result, ablation).rho_surrogate == [None] * len(context)  # no surrogate, no ρ with it


def test_deleting_sentences_keeps_the_rest_of_the_text_as_written():
    from rcqa.faithfulness.sentences.ablation import without_sentences

    passage = "One. Two.\n\nThree. Four."
    # "Two." and the blank line after it go, then "Four." (nothing after it): 6 and 5 characters
    text, moved = without_sentences(passage, [(18, 23), (5, 9)])
    assert text == "One. Three. "
    assert text[moved(11):moved(17)] == "Three." and moved(0) == 0
