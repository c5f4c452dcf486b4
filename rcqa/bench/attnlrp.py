"""AttnLRP against layer-wise IG at its defaults (bench --method attnlrp): both explain the same question at every
layer, in one run, taking turns; with AttnLRP's conservation per layer and what its rules absorbed."""
from __future__ import annotations

import os
import time

import torch

from rcqa.attribution.engine import explain, explained_targets
from rcqa.attribution.lrp import layer_relevance
from rcqa.attribution.settings import IGSettings
from rcqa.bench.against_captum import example_of_length, fastest
from rcqa.model import QAModel

ATTNLRP = IGSettings(method="attnlrp")


def run(qa_model: QAModel, tokens: int = 256, repeats: int = 1) -> dict:
    """Seconds of IG (defaults) and of AttnLRP for the default target at every layer of a `tokens`-token window,
    each the fastest of `repeats`; AttnLRP's relevance pass alone; its conservation error per layer and the
    relevance its rules absorbed, by kind, as fractions of F."""
    from rcqa.attribution.lrp import explain as explain_attnlrp

    example = example_of_length(qa_model, tokens)
    explain_attnlrp(qa_model, example, ATTNLRP)  # warm-up: first-call allocations
    integrated, relevance = fastest(repeats, lambda: explain(qa_model, example),
                                    lambda: explain_attnlrp(qa_model, example, ATTNLRP))
    explained = explained_targets(qa_model, example, ATTNLRP)
    inputs = {name: values.to(qa_model.device) for name, values in explained.window.inputs.items()}
    passes = []
    for _ in range(max(repeats, 3)):
        started = time.perf_counter()
        found = layer_relevance(qa_model.model, inputs, explained.targets)
        passes.append(time.perf_counter() - started)
    value = found.values[0]
    return {
        "model": qa_model.name, "architecture": qa_model.architecture, "device": str(qa_model.device),
        "layers": len(relevance.layers), "tokens": len(relevance.tokens), "repeats": repeats,
        "torch_threads": torch.get_num_threads(), "load_average": os.getloadavg(),
        "target": explained.targets[0].name, "f": value,
        "integrated_gradients_seconds": integrated.seconds, "attnlrp_seconds": relevance.seconds,
        "speedup": integrated.seconds / relevance.seconds,
        "attnlrp_pass_seconds": min(passes),
        "questions_per_hour": 3600 / relevance.seconds,
        "integrated_gradients_completeness_error": max(c.relative_error for c in integrated.completeness),
        "conservation_error": [c.relative_error for c in relevance.completeness],
        "absorbed_share": {kind: amount / value for kind, amount in found.absorbed[0].items()},
    }


def format_table(report: dict) -> str:
    errors = ", ".join(f"{e:.1%}" for e in report["conservation_error"])
    absorbed = ", ".join(f"{kind} {share:+.1%}" for kind, share in report["absorbed_share"].items())
    return (f"{report['model']} ({report['architecture']}, {report['device']}), {report['layers']} layers, "
            f"{report['tokens']} tokens, {report['torch_threads']} torch threads, load average "
            f"{report['load_average'][0]:.2f}\n"
            f"  IG (defaults)        {report['integrated_gradients_seconds']:7.2f} s  (completeness error ≤ "
            f"{report['integrated_gradients_completeness_error']:.2%})\n"
            f"  AttnLRP (explain)    {report['attnlrp_seconds']:7.2f} s  ({report['speedup']:.1f}× faster; "
            f"{report['questions_per_hour']:.0f} questions an hour)\n"
            f"  AttnLRP (the pass)   {report['attnlrp_pass_seconds']:7.2f} s\n"
            f"  conservation error per layer ({report['target']}, F = {report['f']:.3f}): {errors}\n"
            f"  absorbed, as shares of F: {absorbed}")
