"""Batches sized by the device's memory and halved on out-of-memory: the GPU path run on the CPU, with the GPU's
free memory and its out-of-memory errors faked."""
import numpy as np
import pytest
import torch

from rcqa.attribution.cost import SPEED_ENV
from rcqa.attribution.memory import CHECKPOINT_SECONDS, budget_mb, in_chunks
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.targets import Target
from rcqa.attribution.window import window_inputs
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.qa import encode
from tests.helpers.reference import integrate


def test_the_budget_is_the_configured_one_on_a_cpu_and_most_of_the_free_memory_on_a_gpu(monkeypatch):
    assert budget_mb(torch.device("cpu"), 1024) == 1024
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (10 * 2**30, 80 * 2**30))
    assert budget_mb(torch.device("cuda", 0), 1024) == int(0.8 * 10 * 1024)


def test_the_operators_budget_replaces_the_configured_one_and_a_gpu_bounds_it(monkeypatch):
    monkeypatch.setenv("RCQA_MEMORY_BUDGET_MB", "2048")
    assert budget_mb(torch.device("cpu"), 1024) == 2048  # a large model's one point may fit on a big CPU
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (1 * 2**30, 80 * 2**30))
    assert budget_mb(torch.device("cuda", 0), 1024) == int(0.8 * 1024)  # never past the GPU's free share
    monkeypatch.setenv("RCQA_MEMORY_BUDGET_MB", "0.5")
    assert budget_mb(torch.device("cpu"), 1024) == 0.5 and budget_mb(torch.device("cuda", 0), 1024) == 0.5


def failing_above(size: int, ran: list):
    def run(begin: int, end: int) -> None:
        if end - begin > size:
            raise torch.OutOfMemoryError("CUDA out of memory (faked)")
        ran.append((begin, end))
    return run


def test_a_chunk_that_runs_out_of_memory_is_halved_and_every_item_runs_once():
    ran = []
    assert in_chunks(11, 8, failing_above(3, ran), torch.device("cpu")) == 2  # 8 → 4 → 2
    assert ran == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 11)]
    assert in_chunks(5, 8, failing_above(8, ran := []), torch.device("cpu")) == 8 and ran == [(0, 5)]
    with pytest.raises(torch.OutOfMemoryError):
        in_chunks(3, 4, failing_above(0, []), torch.device("cpu"))  # not even one fits: the error is the user's


def test_integrated_gradients_are_the_same_when_the_path_points_back_off(tiny_model_dirs, monkeypatch):
    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("lighthouse-when")
    inputs = window_inputs(encode(qa_model, example.question, example.passage), 0)
    stack = LayerStack(qa_model.model, inputs)
    x, x_base, target = stack.hidden[1], torch.zeros_like(stack.hidden[1]), Target("span_log_prob", 10, 12)
    (whole,) = integrate(stack, 1, x, x_base, [target], "gausslegendre", 16, memory_budget_mb=1024)
    batches, run_from = [], LayerStack.run_from

    def small_memory(self, layer, hidden):
        if len(hidden) > 3:
            raise torch.OutOfMemoryError("CUDA out of memory (faked)")
        batches.append(len(hidden))
        return run_from(self, layer, hidden)

    monkeypatch.setattr(LayerStack, "run_from", small_memory)
    (backed_off,) = integrate(stack, 1, x, x_base, [target], "gausslegendre", 16, memory_budget_mb=1024)
    assert max(batches) <= 3 and sum(batches) == 16  # every path point once, in the smaller batches
    np.testing.assert_allclose(backed_off.numpy(), whole.numpy(), rtol=1e-6, atol=1e-6 * float(whole.abs().max()))


def test_reduced_precision_reports_its_completeness_and_restores_torchs_setting(tiny_model_dirs):
    from rcqa.attribution.explanation import explain
    from rcqa.bench.against_captum import matmul_precision, reduced_precision

    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("lighthouse-when")
    exact = explain(qa_model, example)
    before = torch.get_float32_matmul_precision()
    found = reduced_precision(qa_model, example, "medium", exact)
    assert torch.get_float32_matmul_precision() == before
    assert found["full_precision_completeness_error"] == max(c.relative_error for c in exact.completeness)
    assert 0 <= found["completeness_error"] and 0 <= found["max_rel_diff"] < 0.5
    assert reduced_precision(qa_model, example, "highest", exact)["max_rel_diff"] <= 1e-6  # the same products
    with pytest.raises(ValueError, match="precision"), matmul_precision("fast"):
        pass


def test_chunks_are_sized_by_time_as_well_so_that_a_checkpoint_comes_within_seconds(tiny_model_dirs, monkeypatch):
    """At a server speed where one path point through the blocks above layer 1, one backward per target, is expected
    to take 0.4 s (the cost model's 36 h² multiply-adds per token, block and target), a chunk holds
    int(1.5 / 0.4) = 3 points with one target and int(1.5 / 0.8) = 1 with two, whatever the memory budget allows
    (all 16 here); the sums are those of one batch."""
    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("lighthouse-when")
    stack = LayerStack(qa_model.model, window_inputs(encode(qa_model, example.question, example.passage), 0))
    x, layer = stack.hidden[1], 1
    x_base, tokens, width = torch.zeros_like(x), x.shape[1], x.shape[2]
    multiply_adds = (stack.num_layers - layer) * tokens * 36 * width**2  # one point, one target
    targets = [Target("span_log_prob", 10, 12), Target("start_logit", 10, 10)]
    (whole,) = integrate(stack, layer, x, x_base, targets[:1], "gausslegendre", 16, memory_budget_mb=1024)
    assert CHECKPOINT_SECONDS == 1.5
    monkeypatch.setenv(SPEED_ENV, str(0.4 / multiply_adds))
    batches, run_from = [], LayerStack.run_from
    monkeypatch.setattr(LayerStack, "run_from", lambda self, at, hidden: batches.append(len(hidden)) or run_from(
        self, at, hidden))
    (timed,) = integrate(stack, layer, x, x_base, targets[:1], "gausslegendre", 16, memory_budget_mb=1024)
    assert batches == [3, 3, 3, 3, 3, 1]
    np.testing.assert_allclose(timed.numpy(), whole.numpy(), rtol=1e-6, atol=1e-6 * float(whole.abs().max()))
    batches.clear()
    integrate(stack, layer, x, x_base, targets, "gausslegendre", 16, memory_budget_mb=1024)
    assert batches == [1] * 16
