"""The runner's batches (Job.batch, `reproduce --batch`): a chunk of questions explained by AttnLRP from passes they
share (rcqa.attribution.explanation.explain_each) gives every question the row, the failure and the kept explanation
it gets explained alone, to float rounding (their windows are padded into one forward and backward, whose matrix
products sum in another order: 1e-5 of each number's scale), with a passage read in several windows, unanswerable
questions and a question asked twice in the batch, on the tiny model and on the embedded SQuAD 2.0 model."""
from dataclasses import replace
from numbers import Number

import numpy as np
import pytest

from rcqa.attribution.layerwise import attnlrp
from rcqa.attribution.lrp import batch_relevance
from rcqa.attribution.settings import resolve
from rcqa.dataset.runner import Job, explain_chunk
from rcqa.gallery import gallery_example

NAMES = ["lighthouse-who", "lighthouse-unanswerable", "canal-long", "orchard-how-many", "library-unanswerable",
         "lighthouse-who", "choir-how-many"]
ROUNDING = 1e-5
TIMED = {"seconds"}  # a batched question's is its share of the batch's time


def same(batched, alone, where: str = "") -> None:
    """Equal, numbers to ROUNDING of their scale (their own size, at least 1), in every list and record."""
    if isinstance(alone, dict):
        assert batched.keys() == alone.keys(), where
        for key in alone.keys() - TIMED:
            same(batched[key], alone[key], f"{where}.{key}")
    elif isinstance(alone, (list, tuple)):
        assert len(batched) == len(alone), where
        for i, (one, other) in enumerate(zip(batched, alone)):
            same(one, other, f"{where}[{i}]")
    elif isinstance(alone, Number) and not isinstance(alone, bool) and alone is not None:
        assert isinstance(batched, Number), where
        if np.isnan(alone):
            assert np.isnan(batched), where
        else:
            assert abs(batched - alone) <= ROUNDING * max(1.0, abs(alone)), (where, batched, alone)
    else:
        assert batched == alone, where


@pytest.fixture(params=["tiny", "default-squad2"])
def model(request, abstaining_tiny_dir) -> str:
    return abstaining_tiny_dir if request.param == "tiny" else "default-squad2"


@pytest.mark.parametrize("span", ["predicted", "gold"])  # gold: the unanswerable questions fail, in their places
def test_a_batch_gives_each_question_what_it_gets_alone(model, span, one_torch_thread, monkeypatch):
    examples = [gallery_example(name) for name in NAMES]
    shared = []  # how many questions each pass held: the batch is taken, not left for one by one
    monkeypatch.setattr(attnlrp, "batch_relevance", lambda model, inputs, targets: shared.append(len(targets)) or
                        batch_relevance(model, inputs, targets))
    job = Job(model, resolve(method="attnlrp", span=span, targets=["span_logits", "span_log_prob"]), "l2", 5)

    rows, failures, results = explain_chunk(job, examples)
    assert shared == []  # a batch of 1 explains each alone
    batched_rows, batched_failures, batched_results = explain_chunk(replace(job, batch=8), examples)
    assert shared == [len(examples) - len(failures)]

    assert [row["id"] for row in batched_rows] == [row["id"] for row in rows]
    assert any(row["n_windows"] > 1 for row in rows)  # the canal is read in several windows
    assert batched_failures == failures and len(failures) == (2 if span == "gold" else 0)
    for batched, alone in zip(batched_rows, rows):
        same(batched, alone, batched["id"])
    assert [key for key, _ in batched_results] == [key for key, _ in results]
    for (_, batched), (_, alone) in zip(batched_results, results):
        scale = np.abs(alone.scores).max()
        np.testing.assert_allclose(batched.scores, alone.scores, rtol=0, atol=ROUNDING * scale)
        assert batched.answer == alone.answer and batched.targets == alone.targets
