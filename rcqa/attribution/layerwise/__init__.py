"""The layer-wise methods, each one class in a module of its own on base.LayerwiseMethod, which registers it by
name: the CLI's choices, the pages' options, the cost model and the figures read LAYERWISE_METHODS. Each import
below is a method's registry line (docs/architecture.md: a new layer-wise method)."""
from rcqa.attribution.layerwise.base import (LAYERWISE_METHODS, ExplainedLayers, ExplainedTargets, LayerwiseMethod,
                                             Tokens, layerwise_method, method_of)
from rcqa.attribution.layerwise.integrated_gradients import IntegratedGradients
from rcqa.attribution.layerwise.attnlrp import AttnLRP
from rcqa.attribution.layerwise.gradient_x_activation import GradientTimesActivation

__all__ = ["LAYERWISE_METHODS", "AttnLRP", "ExplainedLayers", "ExplainedTargets", "GradientTimesActivation",
           "IntegratedGradients", "LayerwiseMethod", "Tokens", "layerwise_method", "method_of"]
