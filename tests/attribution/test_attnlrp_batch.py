"""AttnLRP over a batch (rcqa.attribution.lrp.relevance.batch_relevance): several questions' windows of different
lengths, padded on the right into one forward and one backward per target, each with targets of its own (an
unanswerable question's "no answer" among them, and the later window of a passage read in several), give each
question what it gets alone (layer_relevance on its own unpadded window): relevance at every layer and token, the
layer outputs, F, the relevance entering at the logits and what the rules absorbed in each block, to float rounding
(the batch's matrix products are summed in another order: 5e-5 of the largest value here; one CPU was seen
2e-5 off on the SQuAD 2.0 model, at 10 of its 569,856 scores), on the tiny models of
every family and on the embedded SQuAD 2.0 model."""
import dataclasses

import numpy as np
import pytest

from rcqa.attribution.explanation import explained_targets
from rcqa.attribution.lrp.relevance import batch_relevance, layer_relevance
from rcqa.attribution.settings import resolve
from rcqa.attribution.window import on_device, padded_batch
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.types import Example
from tests.helpers.random_weights import randomised

# (example, targets): a span's sum of logits and log-probability, "no answer" read at [CLS] for an unanswerable
# question, one logit alone (the other's gradient zero), and the window holding the answer of a passage in several
QUESTIONS = [("lighthouse-who", ["span_logits", "span_log_prob"]),
             ("lighthouse-unanswerable", ["null", "answer_vs_null"]),
             ("orchard-how-many", ["start_logit"]),
             ("canal-long", ["span_log_prob"])]
ROUNDING = 5e-5


@pytest.fixture(scope="module", params=["tiny", "default-squad2"])
def qa_model(request, abstaining_tiny_dir):
    """A model that may say "no answer", so that its null targets can be explained: the tiny BERT with random biases
    (a private copy), so that its rules absorb what a trained model's would, and the embedded SQuAD 2.0 model."""
    if request.param == "default-squad2":
        return load_model("default-squad2")
    model = load_model(abstaining_tiny_dir)
    return dataclasses.replace(model, model=randomised(model.model))


def explained(qa_model, name: str, targets: list[str]):
    settings = resolve(method="attnlrp", targets=targets, allow_null=True)
    return explained_targets(qa_model, gallery_example(name), settings)


def close(batched: float, alone: float, scale: float) -> bool:
    return abs(batched - alone) <= ROUNDING * scale


def test_each_question_of_a_padded_batch_gets_what_it_gets_alone(qa_model):
    found = [explained(qa_model, name, targets) for name, targets in QUESTIONS]
    windows = [on_device(item.window.inputs, qa_model.device) for item in found]
    lengths = [w["input_ids"].shape[1] for w in windows]
    assert len(set(lengths)) > 2  # padded to the longest, by different amounts
    assert found[3].window.window > 0  # the canal's answer lies past its first window
    alone = [layer_relevance(qa_model.model, w, item.targets) for w, item in zip(windows, found)]

    batched = batch_relevance(qa_model.model, on_device(padded_batch(qa_model.tokenizer, windows), qa_model.device),
                              [item.targets for item in found])

    for one, other, length in zip(batched, alone, lengths):
        assert one.relevance.shape == other.relevance.shape and one.relevance.shape[2] == length
        scale = float(other.relevance.abs().max())
        np.testing.assert_allclose(one.relevance.numpy(), other.relevance.numpy(), rtol=0, atol=ROUNDING * scale)
        np.testing.assert_allclose(one.hidden.numpy(), other.hidden.numpy(), rtol=0,
                                   atol=ROUNDING * float(other.hidden.abs().max()))
        for t in range(len(other.values)):
            assert close(one.values[t], other.values[t], abs(other.values[t]) + 1)
            assert close(one.entering[t], other.entering[t], abs(other.entering[t]) + 1)
            assert one.ledgers[t].keys() == other.ledgers[t].keys()
            for block, kinds in other.ledgers[t].items():
                assert one.ledgers[t][block].keys() == kinds.keys()
                assert all(close(one.ledgers[t][block][kind], amount, abs(other.entering[t]) + 1)
                           for kind, amount in kinds.items()), (block, one.ledgers[t][block], kinds)
    # the rules absorb something here (random biases), so the ledgers compared are not all zeros
    assert any(abs(amount) > 1e-3 for found in alone for ledger in found.ledgers for kinds in ledger.values()
               for amount in kinds.values())



@pytest.mark.parametrize("family", ["distilbert", "albert", "electra", "roberta"])
def test_every_family_padded_in_a_batch_explains_each_question_as_alone(tiny_model_dirs, family):
    """Each family builds its attention mask its own way (RoBERTa also its positions from the padding)."""
    qa_model = load_model(tiny_model_dirs[family])
    settings = resolve(method="attnlrp", targets=["span_log_prob"])
    examples = [gallery_example(name) for name in ("lighthouse-who", "orchard-how-many", "canal-long")]
    short = Example.of("The bridge was built in 1931 by Anna Berg.", "Who built the bridge?", "Anna Berg")
    found = [explained_targets(qa_model, example, settings) for example in [*examples, short]]
    windows = [on_device(item.window.inputs, qa_model.device) for item in found]
    assert len({w["input_ids"].shape[1] for w in windows}) > 1  # some are padded
    batched = batch_relevance(qa_model.model, on_device(padded_batch(qa_model.tokenizer, windows), qa_model.device),
                              [item.targets for item in found])
    for one, window, item in zip(batched, windows, found):
        other = layer_relevance(qa_model.model, window, item.targets)
        np.testing.assert_allclose(one.relevance.numpy(), other.relevance.numpy(), rtol=0,
                                   atol=ROUNDING * float(other.relevance.abs().max()))
        assert close(one.values[0], other.values[0], abs(other.values[0]) + 1)
