"""Gradient × activation at every layer, the method added through the registry alone, held to Captum's
LayerGradientXActivation on each layer's module of the Hugging Face model."""
from dataclasses import replace

import numpy as np
from captum.attr import LayerGradientXActivation

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import resolve
from rcqa.attribution.targets import Target
from rcqa.gallery import gallery_example
from rcqa.types import AGGREGATIONS
from tests.helpers.captum_equality import captum_aggregations, first_window
from tests.helpers.reference import layer_module


def test_gradient_x_activation_is_captums_at_every_layer(tiny_bert):
    example = gallery_example("comet-who")
    settings = resolve(method="gradient_x_activation", targets=["span_logits", "span_log_prob"])
    result = explain(tiny_bert, example, settings)
    assert result.answer.n_windows == 1 and len(result.layers) == tiny_bert.num_layers + 1
    inputs = first_window(tiny_bert, example)
    model = tiny_bert.model
    for t, explained in enumerate(result.targets):
        target = Target(explained.name, explained.start_token, explained.end_token)

        def forward(input_ids, attention_mask, token_type_ids):
            output = model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return target(output.start_logits, output.end_logits)

        for layer in range(len(result.layers)):
            found = LayerGradientXActivation(forward, layer_module(model, layer)).attribute(
                inputs["input_ids"], additional_forward_args=(inputs["attention_mask"], inputs["token_type_ids"]))
            reference = (found[0] if isinstance(found, tuple) else found)[0].detach()
            for name, expected in captum_aggregations(reference).items():
                ours = result.scores[t, AGGREGATIONS.index(name), layer]
                assert np.abs(ours - expected).max() <= 1e-4 * np.abs(expected).max(), (explained.name, layer, name)


def test_gradient_x_activation_costs_one_gradient_a_layer_whatever_the_path_settings(tiny_bert):
    # one forward and one backward above each layer: a path point a layer, as IG with one fixed step costs
    from rcqa.attribution.cost import explanation_cost, explanation_price

    chosen = resolve(method="gradient_x_activation", steps=64, tolerance=0.001)
    cost = explanation_cost(tiny_bert, chosen, windows=1, tokens=100)
    assert cost.points == 1 and cost.targets == 1
    assert explanation_price(tiny_bert, chosen, windows=1, tokens=100).worst == cost.seconds()  # no refinement
    assert explanation_cost(tiny_bert, resolve(steps=64, tolerance=0.001), windows=1, tokens=100).points > 1


def test_its_completeness_gap_is_shown_as_information_never_as_advice(tiny_bert):
    # one gradient is far from complete (its gap was 99 % at a layer in the gallery): no setting mends it, so
    # neither the banner nor the chart may tell the user to raise the steps; IG's coarse path still is told to
    from rcqa import figures
    from rcqa.ui.explore import incomplete_warning

    example = gallery_example("bakery-where")
    one_point = explain(tiny_bert, example, resolve(method="gradient_x_activation"))
    errors = np.array([c.relative_error for c in one_point.completeness])
    assert (errors > figures.COMPLETENESS_WARNING).any()  # the gap is there to be shown
    chart = figures.completeness(one_point)
    (bars,) = chart.figure.data  # no threshold line in the legend
    assert np.allclose(bars.y, np.maximum(100 * errors, 1e-6))
    assert set(bars.marker.color) == {"#7f7f7f"} and not chart.figure.layout.shapes
    subtitle = chart.figure.layout.title.subtitle.text.replace("<br>", " ")
    assert "promises no completeness" in subtitle and "raise the steps" not in subtitle
    assert figures.incomplete_layers(one_point) == [] and incomplete_warning(one_point) is None
    # the same numbers read as IG's one-step path: a gap its settings do mend, so the advice is given
    coarse = replace(one_point, settings=replace(one_point.settings, method="integrated_gradients"))
    warning = incomplete_warning(coarse)
    assert warning is not None and "raise the steps or set an adaptive tolerance" in warning
    assert "raise the steps" in figures.completeness(coarse).figure.layout.title.subtitle.text.replace("<br>", " ")
