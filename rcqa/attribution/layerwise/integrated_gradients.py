"""Layer-wise Integrated Gradients (Ramnath et al., 2020): at the output of every layer, a path of gradients from
the baseline's states to the input's, checked for completeness (rcqa.attribution.engine), over the answer's window
(prefix-cached) or the whole passage (rcqa.attribution.passage); and what its path is expected to cost.

Expected points: a fixed rule takes its steps. The adaptive rule (Gauss–Legendre with a tolerance) starts from
its steps and refines the panels that miss the tolerance, up to max_steps: on the gallery with the default model
it spent about ADAPTIVE_POINTS a layer whatever it started from (1 or 8 steps), and about ADAPTIVE_GROWTH times its
start from more steps, weighted as the work is (the lower layers, which run the most blocks, take the most
points). Its worst case is max_steps a layer (worst_case): what a tolerance the path cannot meet spends."""
from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from rcqa.attribution.engine import LayerResult, Scope, WindowScope, iter_layers
from rcqa.attribution.layerwise.base import ExplainedLayers, ExplainedTargets, LayerwiseMethod, OnLayer, Tokens
from rcqa.attribution.passage import PassageScope
from rcqa.attribution.quadrature import adaptive
from rcqa.attribution.stack import LayerStack
from rcqa.model import QAModel
from rcqa.types import Example
from rcqa.types.method_settings import PATH_FIELDS, MethodSettings, PathSettings
from rcqa.types.settings import ExplainSettings

ADAPTIVE_GROWTH = 1.5  # the adaptive rule's points per layer, over its starting `steps` (module docstring)
ADAPTIVE_POINTS = 12  # the adaptive rule's points per layer, at least, whatever its start (module docstring)


def expected_points(settings: ExplainSettings) -> float:
    """Path points a layer the settings are expected to spend: a fixed rule's steps, or the adaptive rule's
    starting steps grown as measured (ADAPTIVE_GROWTH, at least ADAPTIVE_POINTS), never past max_steps."""
    if settings.tolerance is not None and adaptive(settings.rule):
        return min(settings.max_steps, max(settings.steps * ADAPTIVE_GROWTH, ADAPTIVE_POINTS))
    return settings.steps


def worst_case(settings: ExplainSettings) -> ExplainSettings:
    """Settings that cost what these cost at most: the adaptive rule refines until its tolerance is met or max_steps
    gradients are spent (rcqa.attribution.path), so at most it is the fixed rule at max_steps points a layer. Any
    price of IG's path (an explanation's, a comparison's) priced on worst_case(settings) is its worst case."""
    if settings.tolerance is not None and adaptive(settings.rule):
        return replace(settings, steps=settings.max_steps, tolerance=None)
    return settings


class IntegratedGradients(LayerwiseMethod):
    name = "integrated_gradients"
    label = "Integrated Gradients (exact)"
    colour = "#d62728"
    description = "layer-wise Integrated Gradients: exact (completeness checked), a path of gradients per layer"
    caption = ("Integrated Gradients at the output of every layer, as in Ramnath et al., “Towards Interpreting BERT "
               "for Reading Comprehension Based QA” (EMNLP 2020).")
    completeness_remedy: ClassVar[str | None] = "raise the steps or set an adaptive tolerance"
    runner_goal_per_hour: ClassVar[int | None] = 3_500  # issue 58
    embeddings_description = ("Integrated Gradients at the embeddings' output with rcqa's engine (its baseline and "
                              "rule, checked for completeness), over the hidden dims")

    def used_settings(self, settings: ExplainSettings) -> MethodSettings:
        return PathSettings(**{name: getattr(settings, name) for name in PATH_FIELDS})

    def path_points(self, settings: ExplainSettings, blocks: int) -> float:
        return expected_points(self.path(settings))

    def worst_case(self, settings: ExplainSettings) -> ExplainSettings:
        return worst_case(self.path(settings))

    def embeddings_layer(self, qa_model: QAModel, example: Example, settings: ExplainSettings,
                         explained: ExplainedTargets, stack: LayerStack) -> LayerResult:
        # the path at the embeddings alone, from the window's recorded layer outputs
        path = self.path(settings)
        scope = WindowScope.of(qa_model, explained.window.inputs, explained.targets, path.baseline, stack)
        (embeddings,) = iter_layers(scope, path, layers=[0])
        return embeddings

    def path(self, settings: ExplainSettings) -> ExplainSettings:
        """The settings the engine integrates the path with: the settings as chosen."""
        return settings

    def explain_layers(self, qa_model: QAModel, example: Example, settings: ExplainSettings,
                       explained: ExplainedTargets, on_layer: OnLayer | None) -> ExplainedLayers:
        path = self.path(settings)
        scope: Scope
        if settings.windows == "all":
            scope = passage = PassageScope.of(qa_model, explained.window, explained.targets, explained.foil,
                                              path.baseline, on_layer)
            tokens = Tokens.of_passage(example, explained, passage)
        else:
            scope = WindowScope.of(qa_model, explained.window.inputs, explained.targets, path.baseline)
            tokens = Tokens.of_window(example, explained)
        layers = []
        for result in iter_layers(scope, path):
            layers.append(result)
            if on_layer:
                on_layer(result)
        return ExplainedLayers(tokens, layers, *scope.kept_states())
