"""AttnLRP against layer-wise IG at its defaults (bench --method attnlrp): both explain the same question at every
layer, in one run, taking turns; with AttnLRP's conservation per layer and what its rules absorbed."""
from __future__ import annotations

import os
import time

import torch

from rcqa.attribution.explanation import explain, explained_targets
from rcqa.attribution.layerwise.attnlrp import AttnLRP
from rcqa.attribution.lrp import layer_relevance
from rcqa.attribution.settings import resolve
from rcqa.attribution.targets import Target
from rcqa.bench.against_captum import example_of_length, fastest
from rcqa.model import QAModel
from rcqa.types import Attribution

ATTNLRP = resolve(method=AttnLRP.name)  # its default target (span_logits)
CHECKED_TARGETS = ("span_log_prob", "span_logits")  # conservation and absorption are reported for both


def run(qa_model: QAModel, tokens: int = 256, repeats: int = 1) -> dict:
    """Seconds of IG (defaults) and of AttnLRP for the default target at every layer of a `tokens`-token window,
    each the fastest of `repeats`; AttnLRP's relevance pass alone; for CHECKED_TARGETS, its conservation error per
    layer against the relevance entering at the logits, what its rules absorbed, by kind, and the target function's
    own gap (F − entering), as fractions of the entering relevance."""
    example = example_of_length(qa_model, tokens)
    explain(qa_model, example, ATTNLRP)  # warm-up: first-call allocations
    integrated, relevance = fastest(repeats, lambda: explain(qa_model, example),
                                    lambda: explain(qa_model, example, ATTNLRP))
    assert isinstance(integrated, Attribution) and isinstance(relevance, Attribution)
    explained = explained_targets(qa_model, example, ATTNLRP)
    inputs = {name: values.to(qa_model.device) for name, values in explained.window.inputs.items()}
    passes = []
    for _ in range(max(repeats, 3)):
        started = time.perf_counter()
        layer_relevance(qa_model.model, inputs, explained.targets)
        passes.append(time.perf_counter() - started)
    window = explained.window
    targets = [Target(name, window.start_token, window.end_token) for name in CHECKED_TARGETS]
    found = layer_relevance(qa_model.model, inputs, targets)
    return {
        "model": qa_model.name, "architecture": qa_model.architecture, "device": str(qa_model.device),
        "layers": len(relevance.layers), "tokens": len(relevance.tokens), "repeats": repeats,
        "torch_threads": torch.get_num_threads(), "load_average": os.getloadavg(),
        "target": explained.targets[0].name,
        "integrated_gradients_seconds": integrated.seconds, "attnlrp_seconds": relevance.seconds,
        "speedup": integrated.seconds / relevance.seconds,
        "attnlrp_pass_seconds": min(passes),
        "questions_per_hour": 3600 / relevance.seconds,
        "integrated_gradients_completeness_error": max(c.relative_error for c in integrated.completeness),
        "f": dict(zip(CHECKED_TARGETS, found.values)),
        "entering": dict(zip(CHECKED_TARGETS, found.entering)),
        "target_gap_share": {name: found.target_gap(t) / found.entering[t] for t, name in enumerate(CHECKED_TARGETS)},
        "conservation_error": {name: [float(abs(r.double().sum() - value) / abs(value)) for r in relevance]
                               for name, value, relevance in zip(CHECKED_TARGETS, found.entering, found.relevance)},
        "absorbed_share": {name: {kind: amount / found.entering[t] for kind, amount in found.absorbed(t).items()}
                           for t, name in enumerate(CHECKED_TARGETS)},
    }


def format_table(report: dict) -> str:
    lines = [f"{report['model']} ({report['architecture']}, {report['device']}), {report['layers']} layers, "
             f"{report['tokens']} tokens, {report['torch_threads']} torch threads, load average "
             f"{report['load_average'][0]:.2f}",
             f"  IG (defaults)        {report['integrated_gradients_seconds']:7.2f} s  (completeness error ≤ "
             f"{report['integrated_gradients_completeness_error']:.2%})",
             f"  AttnLRP (explain)    {report['attnlrp_seconds']:7.2f} s  ({report['speedup']:.1f}× faster; "
             f"{report['questions_per_hour']:.0f} questions an hour)",
             f"  AttnLRP (the pass)   {report['attnlrp_pass_seconds']:7.2f} s"]
    for name, errors in report["conservation_error"].items():
        absorbed = ", ".join(f"{kind} {share:+.1%}" for kind, share in report["absorbed_share"][name].items())
        lines += [f"  {name} (F = {report['f'][name]:.3f}, entering {report['entering'][name]:.3f}, F − entering "
                  f"{report['target_gap_share'][name]:+.1%} of it): conservation error per layer "
                  + ", ".join(f"{e:.1%}" for e in errors), f"    absorbed, as shares of the entering relevance: {absorbed}"]
    return "\n".join(lines)
