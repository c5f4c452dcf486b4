"""explain, the path every caller takes, against Captum's IG of the same target at the same span, layer by layer
(tests/helpers/reference.py)."""
import numpy as np
import torch

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.targets import Target
from rcqa.attribution.window import window_inputs
from rcqa.qa import encode
from rcqa.types import AGGREGATIONS
from tests.helpers.reference import captum_layer_ig, layer_output


def first_window(qa_model, example):
    return window_inputs(encode(qa_model, example.question, example.passage), 0)


def pad_input(qa_model, inputs):
    ids = inputs["input_ids"]
    special = torch.isin(ids, torch.tensor(qa_model.tokenizer.all_special_ids))
    return {**inputs, "input_ids": torch.where(special, ids, qa_model.tokenizer.pad_token_id)}


def captum_aggregations(reference: torch.Tensor) -> dict[str, np.ndarray]:
    """Captum's tokens × dim attributions as the token scores a result keeps, worked out here with numpy."""
    vectors = reference.double().numpy()
    norm = np.linalg.norm(vectors, axis=-1)
    return {"l2": norm, "sum": vectors.sum(-1), "abs_sum": np.abs(vectors).sum(-1), "l2_squared": norm**2}


def assert_matches_captum(qa_model, example, baseline_kind, target_name, method, steps, windows="answer"):
    """explain (one window, or the whole passage when it is one window) against Captum's IG of the same target at
    the same span, at every layer, per token and token score."""
    settings = ExplainSettings(targets=(target_name,), baseline=baseline_kind, rule=method, steps=steps, tolerance=None,
                          memory_budget_mb=1, windows=windows)  # a tiny budget: the path points run in chunks
    result = explain(qa_model, example, settings)
    assert result.answer.n_windows == 1  # one window, so the whole passage's tokens are the window's
    inputs = first_window(qa_model, example)
    explained = result.targets[0]
    target = Target(target_name, explained.start_token, explained.end_token)
    for layer in range(len(result.layers)):
        reference_baseline = (layer_output(qa_model.model, pad_input(qa_model, inputs), layer)
                              if baseline_kind == "pad" else torch.zeros_like(layer_output(qa_model.model, inputs,
                                                                                           layer)))
        reference = captum_layer_ig(qa_model.model, inputs, layer, reference_baseline, target, method, steps)
        for name, expected in captum_aggregations(reference).items():
            ours = result.scores[0, AGGREGATIONS.index(name), layer]
            assert np.abs(ours - expected).max() <= 1e-4 * np.abs(expected).max(), (layer, name, baseline_kind)
