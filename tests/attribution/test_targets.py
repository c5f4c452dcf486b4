"""Targets: each a function of the start and end logits, checked against softmaxes worked out by hand."""
import math

import pytest
import torch

from rcqa.attribution.targets import TARGETS, Target
from rcqa.types import explained_target

START = [1.0, 2.0, 0.5]
END = [0.0, 1.0, 3.0]


def value(name: str, start: int = 1, end: int = 2) -> float:
    return float(Target(name, start, end)(torch.tensor([START]), torch.tensor([END]))[0])


def softmax(logits: list[float], i: int) -> float:
    return math.exp(logits[i]) / sum(math.exp(x) for x in logits)


def test_span_logits_and_single_logits():
    assert value("span_logits") == pytest.approx(2.0 + 3.0)
    assert value("start_logit") == pytest.approx(2.0) and value("end_logit") == pytest.approx(3.0)
    assert value("span_logits", 0, 1) == pytest.approx(1.0 + 1.0)


def test_span_log_prob_is_the_log_of_both_softmax_probabilities():
    assert value("span_log_prob") == pytest.approx(math.log(softmax(START, 1)) + math.log(softmax(END, 2)))
    assert value("span_log_prob", 2, 0) == pytest.approx(math.log(softmax(START, 2)) + math.log(softmax(END, 0)))


def test_the_papers_f_is_the_two_largest_softmax_probabilities_wherever_the_span_is():
    expected = softmax(START, 1) + softmax(END, 2)  # the argmaxes: position 1 for start, 2 for end
    assert value("paper_confidence") == pytest.approx(expected)
    assert value("paper_confidence", 0, 0) == pytest.approx(expected)


def test_a_batch_gives_one_value_per_row():
    start, end = torch.tensor([START, END]), torch.tensor([END, START])
    assert Target("span_logits", 1, 2)(start, end).tolist() == pytest.approx([5.0, 1.5])


def test_unknown_targets_are_refused_and_known_ones_describe_themselves():
    with pytest.raises(ValueError, match="unknown target 'max_logit'; choose one of span_logits, span_log_prob"):
        Target("max_logit", 0, 0)
    assert Target("span_log_prob", 0, 0).description == TARGETS["span_log_prob"]


@pytest.mark.parametrize("name", list(TARGETS))
def test_every_target_reads_each_row_of_a_batch_on_its_own(name):
    start, end = torch.tensor([START, [0.0, 0.0, 4.0]]), torch.tensor([END, [2.0, 0.5, 0.1]])
    rows = Target(name, 1, 2)(start, end)
    alone = [float(Target(name, 1, 2)(start[i:i + 1], end[i:i + 1])[0]) for i in range(2)]
    assert rows.shape == (2,) and rows.tolist() == pytest.approx(alone)
    assert rows[0] != pytest.approx(float(rows[1]))  # the two rows differ, so a mix-up would show


def test_null_is_the_log_probability_of_start_and_end_at_cls():
    assert value("null") == pytest.approx(math.log(softmax(START, 0)) + math.log(softmax(END, 0)))
    assert value("null", 0, 2) == value("null", 2, 1)  # the span does not enter it


def test_answer_vs_null_is_the_span_minus_cls_logit_sum_the_negated_run_squad_difference():
    # log p(s=1) + log p(e=2) − log p(s=0) − log p(e=0): the normalisers cancel, (2 + 3) − (1 + 0) = 4
    assert value("answer_vs_null") == pytest.approx(4.0)
    assert value("answer_vs_null") == pytest.approx(value("span_log_prob") - value("null"))
    assert float(Target("answer_vs_null", 1, 2, null_token=1)(torch.tensor([START]), torch.tensor([END]))[0]) \
        == pytest.approx((2 + 3) - (2 + 1))


def test_null_targets_record_where_they_read_no_answer():
    assert explained_target(Target("null", 4, 5), "x", 0).null_token == 0
    assert explained_target(Target("null", 4, 5), "x", 0).to_dict()["null_token"] == 0
    assert "null_token" not in explained_target(Target("span_log_prob", 4, 5), "x", 0).to_dict()


def exact_log_prob(logits: list[float], i: int) -> float:
    """log softmax at i in double precision, from the float32 logits' exact values."""
    top = max(logits)
    return logits[i] - top - math.log(math.fsum(math.exp(x - top) for x in logits))


def test_the_log_probability_keeps_changes_smaller_than_float32s_spacing_near_it():
    """F = log p(start) + log p(end) is near −12 over 400 tokens, where float32's spacing is about 1e-6; a layer
    the answer hardly reads moves it by about 1e-5 (an encoder layer of a model whose decoder barely reads the
    encoder), so F in float32 would make completeness rounding there (issue 40, item 9). The change of F between
    two float32 inputs, against the same logits' log-softmax in double precision, worked out term by term."""
    generator = torch.Generator().manual_seed(0)
    start, end = torch.randn(2, 1, 400, generator=generator)
    nudged = start + 2.0**-16 * torch.randn(8, 400, generator=generator)  # 8 rows of float32 logits
    target = Target("span_log_prob", 3, 5)
    changes = (target(nudged, end.expand(8, -1)) - target(start, end)).tolist()
    base = exact_log_prob(start[0].tolist(), 3)
    expected = [exact_log_prob(row.tolist(), 3) - base for row in nudged]
    assert max(abs(x) for x in expected) < 1e-4  # the changes are a few float32 spacings of F
    assert changes == pytest.approx(expected, rel=1e-6)
