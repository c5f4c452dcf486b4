"""Gradient × activation at the output of every layer (Captum's LayerGradientXActivation, at each layer in turn):
H_l ⊙ ∂F/∂H_l. It is layer-wise IG's path cut to one point: from the zero baseline, the right Riemann sum of one
step evaluates the gradient at α = 1, the input's own states, and weighs it by x − 0. So the engine computes it
(one window or the whole passage), and its completeness check says how far one point is from complete."""
from __future__ import annotations

from dataclasses import replace

from rcqa.attribution.layerwise.integrated_gradients import IntegratedGradients
from rcqa.types.method_settings import MethodSettings, NoSettings
from rcqa.types.settings import ExplainSettings


class GradientTimesActivation(IntegratedGradients):
    name = "gradient_x_activation"
    label = "Gradient × activation (one gradient)"
    colour = "#bcbd22"
    description = ("gradient × activation: each layer's states times the target's gradient there, one backward per "
                   "layer; fast, not complete (the baseline and path settings do not apply)")
    caption = ("Gradient × activation at the output of every layer: each layer's states weighted by the target's "
               "gradient there (Shrikumar et al., 2016; Captum's LayerGradientXActivation), read as in Ramnath et al. "
               "(EMNLP 2020).")
    completeness_remedy = None  # one point of the path: its gap is what one gradient leaves out, mended by no setting
    # at the embeddings' output it is ∂F/∂E ⊙ E, which gradient × input (rcqa.attribution.methods) compares already
    # from the gradient it shares with gradient sensitivity: offered on the methods page, not compared by default
    embeddings_compared = False
    runner_goal_per_hour = None  # issue 58 set IG's and AttnLRP's only
    embeddings_description = ("gradient × activation at the embeddings' output: ∂F/∂E ⊙ E over the hidden dims, "
                              "computed by the engine as one point of IG's path")

    def used_settings(self, settings: ExplainSettings) -> MethodSettings:
        return NoSettings()  # its path is fixed (path below): no setting the user chose changes its numbers

    def path(self, settings: ExplainSettings) -> ExplainSettings:
        return replace(settings, baseline="zero", rule="riemann_right", steps=1, tolerance=None)

    def settings_text(self, settings: ExplainSettings) -> str:
        return "gradient × activation (no baseline, no path)"
