"""AttnLRP answers a one-window passage from its own forward pass (rcqa.attribution.lrp.answer_logits), so a runner
question costs one forward, not two: the explanation equals the one made from the model's own reading (to float
rounding: the rule copy's attention is the eager one), and the model's forward is not run. A longer passage, or a
forward kept for other inputs, goes the usual way."""
import numpy as np
import pytest
import torch

from rcqa import qa
from rcqa.attribution.explanation import explain
from rcqa.attribution.lrp import answer_logits, layer_relevance
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.targets import Target
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.types import Example
from tests.helpers.tiny_models import ARCHITECTURES

SETTINGS = ExplainSettings(method="attnlrp", targets=("span_logits", "span_log_prob"))


def forwards_counted(monkeypatch) -> list:
    """The calls of the model's own forward over the windows (rcqa.qa.logits)."""
    calls: list = []
    original = qa.logits
    monkeypatch.setattr(qa, "logits", lambda *args, **kwargs: calls.append(args) or original(*args, **kwargs))
    return calls


def same_explanation(found, expected) -> None:
    assert [s.text for s in found.answer.nbest] == [s.text for s in expected.answer.nbest]
    for a, b in zip(found.answer.nbest, expected.answer.nbest):
        assert a.probability == pytest.approx(b.probability, rel=1e-5, abs=1e-7)
    assert found.tokens == expected.tokens and found.window == expected.window
    assert np.allclose(found.scores, expected.scores, rtol=1e-4, atol=1e-5 * np.abs(expected.scores).max())
    assert [c.attribution_sum for c in found.completeness] == pytest.approx(
        [c.attribution_sum for c in expected.completeness], rel=1e-4, abs=1e-5)


# short enough for one window of every tiny model (the RoBERTa one reads it nearly letter by letter)
SHORT = Example(id="short", passage="The lighthouse was designed by Margaret Ellison.", question="Who designed it?")


@pytest.mark.parametrize("family", ARCHITECTURES)
def test_a_one_window_passage_is_answered_and_explained_from_one_forward(tiny_model_dirs, family, monkeypatch):
    model = load_model(tiny_model_dirs[family])
    example = SHORT
    assert len(qa.encode(model, example.question, example.passage)) == 1
    handed = explain(model, example, SETTINGS, reading=qa.read(model, example.passage, example.question))
    calls = forwards_counted(monkeypatch)
    alone = explain(model, example, SETTINGS)
    assert calls == []  # the answer came from the explanation's own forward
    same_explanation(alone, handed)


def test_a_passage_of_several_windows_is_answered_by_the_model_and_explained_as_before(tiny_bert, monkeypatch):
    example = gallery_example("canal-long")
    windows = len(qa.encode(tiny_bert, example.question, example.passage))
    assert windows > 1
    handed = explain(tiny_bert, example, SETTINGS, reading=qa.read(tiny_bert, example.passage, example.question))
    calls = forwards_counted(monkeypatch)
    same_explanation(explain(tiny_bert, example, SETTINGS), handed)
    assert len(calls) == 1


def test_a_forward_kept_for_other_inputs_is_not_taken_for_these(tiny_bert):
    ids = torch.randint(5, 50, (2, 12), generator=torch.Generator().manual_seed(3))
    first, second = ({"input_ids": row[None], "attention_mask": torch.ones_like(row[None])} for row in ids)
    target = [Target("span_logits", 2, 4)]
    alone = layer_relevance(tiny_bert.model, second, target)
    answer_logits(tiny_bert.model, first)  # kept for `first`
    after = layer_relevance(tiny_bert.model, second, target)
    assert torch.equal(after.relevance, alone.relevance) and after.values == alone.values


def test_an_explanation_refused_after_answering_keeps_no_forward(tiny_bert):
    """A distractor-number contrast on a question that is not "how many" is refused once the passage is answered;
    the forward AttnLRP answered from, kept for the backward that will not follow, is dropped then, not held with
    its window's activations until this thread explains again."""
    from rcqa.attribution.contrast import NoFoil
    from rcqa.attribution.lrp.relevance import _rule_model

    example = gallery_example("comet-who")
    settings = ExplainSettings(method="attnlrp", contrast="distractor-number")
    with pytest.raises(NoFoil):
        explain(tiny_bert, example, settings)
    assert _rule_model(tiny_bert.model).pending is None  # before: the answer's forward and its graph
    same_explanation(explain(tiny_bert, example, SETTINGS), explain(tiny_bert, example, SETTINGS))
