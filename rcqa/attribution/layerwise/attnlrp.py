"""AttnLRP (Achtibat et al., ICML 2024) as a layer-wise method: every layer of the answer's window from one forward
and one backward pass through rcqa.attribution.lrp, relevance conserved through the blocks by its rules."""
from __future__ import annotations

import time
from collections.abc import Sequence

import torch

from rcqa.attribution.layerwise.base import ExplainedLayers, ExplainedTargets, LayerwiseMethod, OnLayer, Tokens, \
    streamed
from rcqa.attribution.lrp import answer_logits, batch_relevance, explain_layers, forget_kept_forward
from rcqa.attribution.lrp.explain import layer_results
from rcqa.attribution.lrp.model import FAMILIES
from rcqa.attribution.lrp.rules import EPSILON
from rcqa.attribution.targets import ENTERING
from rcqa.attribution.window import on_device, padded_batch, window_inputs
from rcqa import qa
from rcqa.model import QAModel
from rcqa.spans import Windows
from rcqa.types import Example
from rcqa.types.method_settings import MethodSettings, RelevanceSettings
from rcqa.types.settings import ExplainSettings


class AttnLRP(LayerwiseMethod):
    name = "attnlrp"
    label = "AttnLRP (one pass)"
    colour = "#2ca02c"
    description = ("AttnLRP (Achtibat et al., 2024): every layer from one forward and one backward pass, relevance "
                   "conserved through the blocks by its rules; the baseline and path settings do not apply")
    caption = ("AttnLRP relevance at the output of every layer, one forward and one backward pass (Achtibat et al., "
               "“AttnLRP: Attention-Aware Layer-Wise Relevance Propagation for Transformers”, ICML 2024), read as in "
               "Ramnath et al. (EMNLP 2020).")
    windows = ("answer",)  # one window's pass; the whole passage is IG's
    # what its rules propagate and what LXT and the paper explain: a log-probability hands its rules z − E_p[z],
    # not log p (docs/attnlrp.md), so IG's default target is not AttnLRP's
    default_targets = ("span_logits",)
    families = FAMILIES  # those its rules are written for
    batches = True  # several questions' windows padded into one pass (rcqa.attribution.lrp.batch_relevance)
    ranking_before_both = "signed"
    runner_goal_per_hour = 20_000  # issue 58
    embeddings_description = ("AttnLRP (Achtibat et al., 2024) at the embeddings' output: each token's relevance over "
                              "the hidden dims (signed: positive supports the target)")

    def target_note(self, target: str) -> str:
        return f" (AttnLRP's rules receive {ENTERING[target]})" if target in ENTERING else ""

    def used_settings(self, settings: ExplainSettings) -> MethodSettings:
        return RelevanceSettings(epsilon=EPSILON)  # its rules' constant; the baseline and path do not apply

    def settings_text(self, settings: ExplainSettings) -> str:
        return "AttnLRP (one pass)"  # no baseline, no path

    def path_points(self, settings: ExplainSettings, blocks: int) -> float:
        # one forward and one backward through every block, as one path point of the embeddings' layer is: L block
        # passes, over the L (L + 1) / 2 that a path point at every layer runs
        return 2 / (blocks + 1)

    def answer_pass(self, settings: ExplainSettings) -> qa.RunWindows:
        return _answer_from_the_pass

    def forget_answer_pass(self, qa_model: QAModel) -> None:
        forget_kept_forward(qa_model.model)

    def explain_layers(self, qa_model: QAModel, example: Example, settings: ExplainSettings,
                       explained: ExplainedTargets, on_layer: OnLayer | None) -> ExplainedLayers:
        layers, hidden_states = explain_layers(qa_model, explained.window.inputs, explained.targets)
        return ExplainedLayers(Tokens.of_window(example, explained), streamed(layers, on_layer), hidden_states, None)


    def batch_answers(self, qa_model: QAModel, windows: Sequence[Windows]) -> list[qa.RunWindows | None]:
        """The one-window passages answered from one padded forward of the rule copy, kept for their backward; a
        longer passage by the model over its windows (None)."""
        single = [i for i, one in enumerate(windows) if len(one) == 1]
        runs: list[qa.RunWindows | None] = [None] * len(windows)
        if not single:
            return runs
        batch = padded_batch(qa_model.tokenizer, [window_inputs(windows[i], 0) for i in single])
        start, end = answer_logits(qa_model.model, on_device(batch, qa_model.device))
        for item, (i, length) in enumerate(zip(single, batch["attention_mask"].sum(-1).tolist())):
            runs[i] = _handed(start[item:item + 1, :length], end[item:item + 1, :length])
        return runs

    def explain_batch(self, qa_model: QAModel, examples: Sequence[Example],
                      explained: Sequence[ExplainedTargets]) -> list[ExplainedLayers]:
        started = time.perf_counter()
        batch = padded_batch(qa_model.tokenizer, [one.window.inputs for one in explained])
        found = batch_relevance(qa_model.model, on_device(batch, qa_model.device), [one.targets for one in explained])
        seconds = (time.perf_counter() - started) / len(explained)  # each its share of the pass
        return [ExplainedLayers(Tokens.of_window(example, one), layer_results(relevance, one.targets, seconds),
                                relevance.hidden.cpu().numpy(), None)
                for example, one, relevance in zip(examples, explained, found)]

def _answer_from_the_pass(qa_model: QAModel, windows: Windows) -> tuple[torch.Tensor, torch.Tensor]:
    """A one-window passage's logits from the rule copy's forward, which its explanation then goes back through
    (rcqa.attribution.lrp.answer_logits); a longer passage's from the model, since the pass covers one window.
    explain has refused a family the rules are not written for before it answers."""
    if len(windows) != 1:
        return qa.logits(qa_model, windows)
    return answer_logits(qa_model.model, on_device(window_inputs(windows, 0), qa_model.device))


def _handed(start: torch.Tensor, end: torch.Tensor) -> qa.RunWindows:
    """A RunWindows that hands back logits computed already (a batch's rows for one example's one window)."""
    return lambda qa_model, windows: (start, end)
