"""AttnLRP's layers, as layer-wise IG gives them (rcqa.attribution.engine.LayerResult), every layer from one pass;
rcqa.attribution.explanation makes the result of them."""
from __future__ import annotations

import time

import numpy as np
import torch

from rcqa.attribution.engine import LayerResult, aggregate
from rcqa.attribution.lrp.relevance import Relevance, layer_relevance
from rcqa.attribution.stack import layer_labels
from rcqa.attribution.targets import Target
from rcqa.attribution.window import on_device
from rcqa.model import QAModel
from rcqa.types import Completeness


def explain_layers(qa_model: QAModel, inputs: dict[str, torch.Tensor],
                   targets: list[Target]) -> tuple[list[LayerResult], np.ndarray]:
    """Every layer of the window of `inputs` given the AttnLRP relevance of each target (the baseline and path
    settings do not apply), and the layer outputs the pass saw. The completeness entries are per layer and target
    conservation checks (kind 'conservation': Σ relevance against the relevance entering at the target, with the
    ledger of what the rules absorbed above the layer); the pass's time is shared among the layers."""
    started = time.perf_counter()
    found = layer_relevance(qa_model.model, on_device(inputs, qa_model.device), targets)
    return layer_results(found, targets, time.perf_counter() - started), found.hidden.cpu().numpy()


def layer_results(found: Relevance, targets: list[Target], seconds: float) -> list[LayerResult]:
    """Per layer, the scores of each target (aggregations of the relevance vectors) and its conservation check;
    the pass's time shared equally."""
    labels = layer_labels(found.hidden.shape[0] - 1)
    return [LayerResult(layer, label, np.stack([aggregate(r[layer]) for r in found.relevance]),
                        conservation(found, targets, layer), seconds / len(labels))
            for layer, label in enumerate(labels)]


def conservation(found: Relevance, targets: list[Target], layer: int) -> list[Completeness]:
    return [Completeness(layer=layer, target=target.name, steps=1, f_input=found.values[t], f_baseline=0.0,
                         attribution_sum=float(found.relevance[t, layer].double().sum()), kind="conservation",
                         entering=found.entering[t], absorbed=found.absorbed(t, layer))
            for t, target in enumerate(targets)]
