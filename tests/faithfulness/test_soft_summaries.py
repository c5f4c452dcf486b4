"""Soft comprehensiveness and soft sufficiency (Zhao & Aletras, ACL 2023): the importances and the two numbers worked
out by hand, the scaled re-answers against forwards of embeddings built here from the model's embedding matrix, the
scaling seen where the model takes its input embeddings, and the registry carrying both into a comparison's report."""
import dataclasses

import numpy as np
import pytest
import torch

from rcqa.attribution.methods import Case
from rcqa.faithfulness.compare import Protocol, compare
from rcqa.faithfulness.deletion import reanswer
from rcqa.faithfulness.paired import MEASURES
from rcqa.faithfulness.report import faithfulness_report
from rcqa.faithfulness.summaries import SUMMARIES, Evidence
from rcqa.faithfulness.summaries.soft import importance
from rcqa.gallery import gallery_example
from tests.helpers.handmade_comparison import handmade_comparison

SOFT_C, SOFT_S = SUMMARIES["soft_comprehensiveness"], SUMMARIES["soft_sufficiency"]


def test_importance_is_the_score_over_the_top_deletable_words_clipped_at_zero():
    # word 3 is not deletable (a spared answer): its large score neither counts nor is scaled
    assert importance(np.array([2.0, -1.0, 1.0, 9.0]), [0, 1, 2]) == pytest.approx([1.0, 0.0, 0.5, 0.0])
    assert importance(np.array([-2.0, -1.0]), [0, 1]) == pytest.approx([0.0, 0.0])  # nothing speaks for the answer


def test_the_two_numbers_by_hand():
    # p(x) = .8; two draws re-answered at .5 and .3 with 1 − q, at .9 and .2 with q
    empty = np.zeros((2, 0))
    evidence = Evidence(0.8, empty, empty, empty, {"soft_comprehensiveness": np.array([[0.5], [0.3]]),
                                                   "soft_sufficiency": np.array([[0.9], [0.2]])})
    assert SOFT_C.values(evidence) == pytest.approx([0.3, 0.5])
    assert SOFT_S.values(evidence) == pytest.approx([1.0, 0.4])  # 1 − max(0, −.1); 1 − .6
    assert SOFT_C.values(Evidence(0.8, empty, empty, empty)) is None  # not re-answered: not computed
    assert SOFT_C.higher_is_better and SOFT_S.higher_is_better and MEASURES["soft_sufficiency"] is True


# --- on the tiny model ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def case(tiny_bert):
    return Case.of(tiny_bert, gallery_example("lighthouse-when"))


def by_hand(case, scale_of_word: dict[int, float]) -> float:
    """p(start) · p(end) of the explained span from one forward of embeddings built here: each token's row of the
    word-embedding matrix, times its word's scale."""
    ids = case.window.inputs["input_ids"][0]
    scales = torch.ones(len(ids))
    for index, scale in scale_of_word.items():
        scales[list(case.passage_words()[index].tokens)] = scale
    matrix = case.qa_model.model.get_input_embeddings().weight
    others = {name: values for name, values in case.window.inputs.items() if name != "input_ids"}
    with torch.no_grad():
        output = case.qa_model.model(inputs_embeds=(matrix[ids] * scales[:, None])[None], **others)
    start, end = case.target_positions
    return float(output.start_logits[0].softmax(-1)[start] * output.end_logits[0].softmax(-1)[end])


def test_scaled_re_answers_equal_forwards_of_embeddings_built_by_hand(case):
    words = case.passage_words()
    deletable = list(range(len(words)))
    (original,) = reanswer(case, [()])
    p0 = original.span_probability
    scores = np.zeros(len(words))
    scores[[0, 2, 5]] = [1.0, 0.5, 0.25]  # q = 1, .5, .25; every other word 0
    graded, zeros, ones = scores, np.zeros(len(words)), np.ones(len(words))
    # the span's probability in each re-answer (the numbers are p(x) less them: test_the_two_numbers_by_hand)
    taken = [float(p[0]) for p in SOFT_C.reanswer(case, words, deletable, [graded, zeros, ones])]
    kept = [float(p[0]) for p in SOFT_S.reanswer(case, words, deletable, [graded, zeros, ones])]
    every_word = dict.fromkeys(deletable, 0.0)
    emptied = by_hand(case, every_word)
    close = {"rel": 1e-5, "abs": 0.0}  # the tiny model's span is unlikely (p0 about 1e-4) and moves little
    # graded: comprehensiveness scales by 1 − q, sufficiency by q (0 for every unscored word)
    assert taken[0] == pytest.approx(by_hand(case, {0: 0.0, 2: 0.5, 5: 0.75}), **close)
    assert kept[0] == pytest.approx(by_hand(case, {**every_word, 0: 1.0, 2: 0.5, 5: 0.25}), **close)
    # importance 0 everywhere: nothing is taken away (soft comprehensiveness 0), the passage is emptied for sufficiency
    assert taken[1] == pytest.approx(p0, **close) and kept[1] == pytest.approx(emptied, **close)
    # importance 1 everywhere: the full deletion of every passage word's embedding, and all kept (soft sufficiency 1)
    assert taken[2] == pytest.approx(emptied, **close) and kept[2] == pytest.approx(p0, **close)
    assert abs(p0 - emptied) > 0.05 * p0  # the case tells them apart: emptying the passage moves the span's p
    assert abs(taken[0] - p0) > 1e-3 * p0 and abs(taken[0] - emptied) > 1e-3 * p0  # and the graded from both


def test_the_scaling_is_what_the_model_takes_as_its_input_embeddings(case):
    """The model's embeddings module receives the word embeddings already scaled (its positions and segments added
    after, unscaled), the question's and special tokens' kept whole."""
    words = case.passage_words()
    seen = []
    embeddings = case.qa_model.model.base_model.embeddings
    hook = embeddings.register_forward_pre_hook(lambda module, args, kwargs: seen.append(kwargs["inputs_embeds"]),
                                                with_kwargs=True)
    try:
        scores = np.zeros(len(words))
        scores[1] = 1.0
        SOFT_C.reanswer(case, words, range(len(words)), [scores])
    finally:
        hook.remove()
    (taken,) = seen
    ids = case.window.inputs["input_ids"][0]
    expected = case.qa_model.model.get_input_embeddings().weight[ids].detach().clone()
    expected[list(words[1].tokens)] = 0.0  # comprehensiveness: 1 − q = 0 for the one scored word
    assert taken.shape == (1, len(ids), expected.shape[1])
    assert torch.allclose(taken[0], expected)


def test_a_comparison_reports_both_beside_the_deletion_summaries(tiny_bert):
    found = compare(tiny_bert, gallery_example("lighthouse-when"), ["gradient"], Protocol(k=2, draws=2))
    report = faithfulness_report(found)
    entry, random = report.methods["gradient:magnitude"], report.random
    p0 = found.original.span_probability
    stored = found.methods["gradient:magnitude"].reanswered[0]
    assert entry.summaries["soft_comprehensiveness"] == pytest.approx(p0 - stored["soft_comprehensiveness"][0])
    assert entry.summaries["soft_sufficiency"] == pytest.approx(1 - max(0.0, p0 - stored["soft_sufficiency"][0]))
    assert len(random.summaries["soft_comprehensiveness"].draws) == 2
    assert list(entry.to_dict())[-3:] == ["soft_comprehensiveness", "soft_sufficiency", "versus_random"]
    assert {"soft_comprehensiveness", "soft_sufficiency"} <= report.paired.keys()
    # a comparison saved before they were registered reports without them, and its file keeps its keys
    before = dataclasses.replace(found, methods={name: dataclasses.replace(result, reanswered=[])
                                                 for name, result in found.methods.items()})
    assert "soft_comprehensiveness" not in faithfulness_report(before).methods["gradient:magnitude"].to_dict()
