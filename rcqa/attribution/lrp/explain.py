"""explain with AttnLRP: the same result as layer-wise IG (rcqa.attribution.engine), every layer from one pass."""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from rcqa.attribution.engine import LayerResult, aggregate, explained_targets, window_attribution
from rcqa.attribution.lrp.relevance import Relevance, layer_relevance
from rcqa.attribution.settings import IGSettings
from rcqa.attribution.stack import layer_labels
from rcqa.attribution.targets import Target
from rcqa.model import QAModel
from rcqa.types import Attribution, Completeness, Example


def explain(qa_model: QAModel, example: Example, settings: IGSettings,
            on_layer: Callable[[LayerResult], None] | None = None) -> Attribution:
    """Answer the example, then give every layer of the answer's window the AttnLRP relevance of each target
    (settings.targets and contrast as for IG; baseline and path settings do not apply). The result's completeness
    entries are per layer and target conservation checks (kind 'conservation': Σ relevance against F)."""
    started = time.perf_counter()
    explained = explained_targets(qa_model, example, settings)
    inputs = {name: values.to(qa_model.device) for name, values in explained.window.inputs.items()}
    found = layer_relevance(qa_model.model, inputs, explained.targets)
    layers = layer_results(found, explained.targets, time.perf_counter() - started)
    for result in layers:
        if on_layer:
            on_layer(result)
    return window_attribution(qa_model, example, settings, explained, layers=[r.label for r in layers],
                              scores=np.stack([r.scores for r in layers], axis=2),
                              completeness=[c for r in layers for c in r.completeness],
                              hidden_states=found.hidden.cpu().numpy(), started=started)


def layer_results(found: Relevance, targets: list[Target], seconds: float) -> list[LayerResult]:
    """Per layer, the scores of each target (aggregations of the relevance vectors) and its conservation check;
    the pass's time shared equally."""
    labels = layer_labels(found.hidden.shape[0] - 1)
    return [LayerResult(layer, label, np.stack([aggregate(r[layer]) for r in found.relevance]),
                        conservation(found, targets, layer), seconds / len(labels))
            for layer, label in enumerate(labels)]


def conservation(found: Relevance, targets: list[Target], layer: int) -> list[Completeness]:
    return [Completeness(layer=layer, target=target.name, steps=1, f_input=found.values[t], f_baseline=0.0,
                         attribution_sum=float(found.relevance[t, layer].double().sum()), kind="conservation")
            for t, target in enumerate(targets)]
