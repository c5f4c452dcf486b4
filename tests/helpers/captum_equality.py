"""The engine's layer IG against Captum's LayerIntegratedGradients, layer by layer (tests/helpers/reference.py)."""
import torch

from rcqa.attribution.engine import integrate, window_inputs
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.targets import Target
from rcqa.qa import encode
from tests.helpers.reference import captum_layer_ig, layer_output, max_relative_difference

def first_window(qa_model, example):
    return window_inputs(encode(qa_model, example.question, example.passage), 0)


def pad_input(qa_model, inputs):
    ids = inputs["input_ids"]
    special = torch.isin(ids, torch.tensor(qa_model.tokenizer.all_special_ids))
    return {**inputs, "input_ids": torch.where(special, ids, qa_model.tokenizer.pad_token_id)}


def assert_matches_captum(qa_model, example, baseline_kind, target_name, method, steps):
    inputs = first_window(qa_model, example)
    stack = LayerStack(qa_model.model, inputs)
    baseline_stack = LayerStack(qa_model.model, pad_input(qa_model, inputs))
    target = Target(target_name, 10, 12)
    for layer in range(stack.num_layers + 1):
        x = stack.hidden[layer]
        x_base = baseline_stack.hidden[layer] if baseline_kind == "pad" else torch.zeros_like(x)
        (ours,) = integrate(stack, layer, x, x_base, [target], method, steps, memory_budget_mb=1)
        reference_baseline = (layer_output(qa_model.model, pad_input(qa_model, inputs), layer)
                              if baseline_kind == "pad" else torch.zeros_like(x))
        reference = captum_layer_ig(qa_model.model, inputs, layer, reference_baseline, target, method, steps)
        assert max_relative_difference(ours, reference) <= 1e-4, (layer, baseline_kind, target_name)
