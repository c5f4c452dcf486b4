"""The engine against the Captum loop users write today, on the same model and input.

same_work            Captum's LayerIntegratedGradients on each layer, start and end attributed in separate
                     calls, against the engine with the same targets, [PAD]-input baseline, rule and steps.
time_to_accuracy     that loop at the tutorial's defaults (50 Gauss-Legendre steps) against the engine at
                     its defaults (adaptive steps until every layer's completeness error is <= 1 %); each
                     side's token scores are also compared with a converged 128-point reference.
all_layers_seconds   the engine's default explanation of the input, every layer.
fixed_steps_seconds  the same at a fixed 50 Gauss-Legendre steps (the GPU figure, with --random-bert-base;
                     --random-config for a random BERT of another shape).
"""
from __future__ import annotations

import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
import torch

from rcqa.attribution.cache import ResultCache, cached_explain
from rcqa.attribution.explanation import explain
from rcqa.attribution.window import window_inputs
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.stack import find_blocks
from rcqa.gallery import gallery_example
from rcqa.model import QAModel
from rcqa.qa import answer_with_windows
from rcqa.types import Attribution, Example

CAPTUM_TUTORIAL_STEPS = 50
REFERENCE_STEPS = 128
FIXED_STEPS = 50  # the issue's GPU figure: every layer at 50 Gauss-Legendre steps, no adaptivity


def example_of_length(qa_model: QAModel, tokens: int) -> Example:
    """The long gallery passage cut so that question + passage fill about `tokens` tokens (one window)."""
    source = gallery_example("canal-long")
    words = source.passage.split(" ")
    tokenizer = qa_model.tokenizer
    limit = min(tokens, qa_model.max_len)
    low, high = 1, len(words)
    while low < high:  # the most words whose encoding still fits
        middle = (low + high + 1) // 2
        if len(tokenizer(source.question, " ".join(words[:middle]))["input_ids"]) <= limit:
            low = middle
        else:
            high = middle - 1
    return Example(id=f"bench-{tokens}", passage=" ".join(words[:low]), question=source.question)


@dataclass
class CaptumRun:
    """The Captum loop's result: per position ("start", "end") the layers' tokens × dim attributions,
    each layer's relative completeness error, and the seconds it took."""

    seconds: float
    attributions: dict[str, list[torch.Tensor]]
    errors: list[float]


def captum_loop(qa_model: QAModel, example: Example, steps: int) -> CaptumRun:
    """What Captum's SQuAD tutorial does: LayerIntegratedGradients on each layer, start and end apart."""
    from captum.attr import LayerIntegratedGradients

    answer, windows = answer_with_windows(qa_model, example.passage, example.question)
    best = answer.best
    assert best is not None  # a passage of whole words always decodes to some span
    inputs = {k: v.to(qa_model.device) for k, v in window_inputs(windows, best.window).items()}
    ids = inputs["input_ids"]
    special = torch.isin(ids, torch.tensor(qa_model.tokenizer.all_special_ids, device=ids.device))
    baseline_ids = torch.where(special, ids, qa_model.tokenizer.pad_token_id)
    others = {k: v for k, v in inputs.items() if k != "input_ids"}
    base_model = qa_model.model.base_model
    assert isinstance(base_model, torch.nn.Module)  # transformers' BERT-like model below the QA head
    modules = [base_model.embeddings, *find_blocks(qa_model.model)]

    def forward(input_ids, position, token):
        batch = {k: v.expand(input_ids.shape[0], -1) for k, v in others.items()}
        output = qa_model.model(input_ids=input_ids, **batch)
        return (output.start_logits if position == "start" else output.end_logits)[:, token]

    positions = {"start": best.start_token, "end": best.end_token}
    with torch.no_grad():  # F(input) − F(baseline), the same at every layer: outside the timed loop
        totals = {position: float(forward(ids, position, token) - forward(baseline_ids, position, token))
                  for position, token in positions.items()}
    attributions: dict[str, list[torch.Tensor]] = {"start": [], "end": []}
    errors = []
    started = time.perf_counter()
    for module in modules:
        for position, token in positions.items():
            explainer = LayerIntegratedGradients(forward, module)
            attribution, delta = explainer.attribute(
                ids, baselines=baseline_ids, additional_forward_args=(position, token), n_steps=steps,
                method="gausslegendre", internal_batch_size=steps, return_convergence_delta=True)
            attributions[position].append(attribution[0].detach())
            errors.append(abs(float(delta)) / max(abs(totals[position]), 1e-9))
    return CaptumRun(time.perf_counter() - started, attributions, errors)


def captum_scores(captum: CaptumRun) -> np.ndarray:
    """The Captum loop's attributions as (start, end) × (l2, signed sum) × layers × tokens."""
    return np.stack([np.stack([np.stack([vectors.norm(dim=-1).cpu().numpy(), vectors.sum(-1).cpu().numpy()])
                               for vectors in captum.attributions[position]], axis=1)
                     for position in ("start", "end")])


def max_relative_difference(scores: np.ndarray, reference: np.ndarray) -> float:
    """Over targets, layers and both aggregations: max |scores − reference| / max |reference| per layer,
    both (start, end) × (l2, signed sum) × layers × tokens."""
    gap = np.abs(scores - reference).max(axis=-1)
    return float((gap / np.abs(reference).max(axis=-1).clip(1e-12)).max())


def l2_and_sum(result) -> np.ndarray:
    """An engine result's (l2, signed sum) scores, as captum_scores orders them (AGGREGATIONS: l2, sum, …)."""
    return result.scores[:, :2]


def run(qa_model: QAModel, tokens: int = 256, steps: int = 16, repeats: int = 1,
        matmul: str = "highest") -> dict:
    example = example_of_length(qa_model, tokens)
    explain(qa_model, example, ExplainSettings(steps=2, tolerance=None))  # warm-up: first-call allocations
    (default,) = fastest(repeats, lambda: explain(qa_model, example))
    assert isinstance(default, Attribution)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    (fixed,) = fastest(repeats, lambda: explain(qa_model, example, ExplainSettings(steps=FIXED_STEPS, tolerance=None)))
    cache_hit_seconds = _cache_hit_seconds(qa_model, example, default)

    same = ExplainSettings(targets=("start_logit", "end_logit"), steps=steps, tolerance=None)
    engine_same, captum_same = fastest(repeats, lambda: explain(qa_model, example, same),
                                       lambda: captum_loop(qa_model, example, steps))
    assert isinstance(engine_same, Attribution) and isinstance(captum_same, CaptumRun)
    accurate = replace(same, steps=ExplainSettings().steps, tolerance=0.01)
    engine_accurate, captum_tutorial = fastest(
        repeats, lambda: explain(qa_model, example, accurate),
        lambda: captum_loop(qa_model, example, CAPTUM_TUTORIAL_STEPS))
    assert isinstance(engine_accurate, Attribution) and isinstance(captum_tutorial, CaptumRun)
    # token scores converged far past either side: one Gauss-Legendre rule of REFERENCE_STEPS points
    reference = explain(qa_model, example, replace(same, steps=REFERENCE_STEPS, max_steps=REFERENCE_STEPS))

    return {
        "model": qa_model.name, "fingerprint": qa_model.fingerprint, "architecture": qa_model.architecture,
        "device": str(qa_model.device), "layers": len(default.layers), "tokens": len(default.tokens),
        "repeats": repeats,
        "torch_threads": torch.get_num_threads(),
        "all_layers_seconds": default.seconds,
        "all_layers_steps": [c.steps for c in default.completeness],
        "all_layers_completeness_error": max(c.relative_error for c in default.completeness),
        "fixed_steps": FIXED_STEPS,
        "fixed_steps_seconds": fixed.seconds,
        "peak_rss_mb": peak_rss_mb,
        "cache_hit_seconds": cache_hit_seconds,
        "same_work": {
            "targets": list(same.targets), "baseline": "pad", "rule": same.rule, "steps": steps,
            "captum_seconds": captum_same.seconds, "engine_seconds": engine_same.seconds,
            "speedup": captum_same.seconds / engine_same.seconds,
            "max_rel_diff": max_relative_difference(l2_and_sum(engine_same), captum_scores(captum_same)),
        },
        "time_to_accuracy": {
            "captum_steps": CAPTUM_TUTORIAL_STEPS, "captum_seconds": captum_tutorial.seconds,
            "captum_completeness_error": max(captum_tutorial.errors),
            "captum_token_error": max_relative_difference(captum_scores(captum_tutorial), l2_and_sum(reference)),
            "engine_steps": [c.steps for c in engine_accurate.completeness if c.target == "start_logit"],
            "engine_seconds": engine_accurate.seconds,
            "engine_completeness_error": max(c.relative_error for c in engine_accurate.completeness),
            "engine_token_error": max_relative_difference(l2_and_sum(engine_accurate), l2_and_sum(reference)),
            "reference_steps": REFERENCE_STEPS,
            "reference_completeness_error": max(c.relative_error for c in reference.completeness),
            "speedup": captum_tutorial.seconds / engine_accurate.seconds,
        },
        "peak_rss_mb_with_captum": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "reduced_precision": None if matmul == "highest" else reduced_precision(qa_model, example, matmul, default),
    }


MATMUL_PRECISIONS = {
    "highest": "float32 matrix products (the default)",
    "high": "TF32 matrix products on a GPU that has them (bf16 ×3 on some CPUs)",
    "medium": "bf16 matrix products where the hardware has them",
}


@contextmanager
def matmul_precision(precision: str) -> Iterator[None]:
    """torch's float32 matrix-product precision for the duration (process-wide, so restored on the way out)."""
    if precision not in MATMUL_PRECISIONS:
        raise ValueError(f"unknown matmul precision {precision!r}; choose one of {', '.join(MATMUL_PRECISIONS)}")
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def reduced_precision(qa_model: QAModel, example: Example, precision: str, exact: Attribution) -> dict:
    """The default settings again with faster, less exact matrix products: their time, the completeness check
    (which is what says whether the numbers can still be trusted) and how far the token scores moved from `exact`,
    the same settings at full precision."""
    with matmul_precision(precision):
        fast = explain(qa_model, example)
    return {"precision": precision, "description": MATMUL_PRECISIONS[precision], "seconds": fast.seconds,
            "steps": [c.steps for c in fast.completeness],
            "completeness_error": max(c.relative_error for c in fast.completeness),
            "full_precision_completeness_error": max(c.relative_error for c in exact.completeness),
            "max_rel_diff": max_relative_difference(l2_and_sum(fast), l2_and_sum(exact))}


def fastest(repeats: int, *runs: Callable[[], Attribution | CaptumRun]) -> list[Attribution | CaptumRun]:
    """Each run's fastest result of `repeats`, the runs taking turns, so that drift in the speed of shared
    cores (±15 % over minutes here) hits every side alike."""
    results: list[list[Attribution | CaptumRun]] = [[] for _ in runs]
    for _ in range(repeats):
        for job, kept in zip(runs, results):
            kept.append(job())
    return [min(kept, key=lambda r: r.seconds) for kept in results]


def _cache_hit_seconds(qa_model: QAModel, example: Example, result) -> float:
    """Time to serve a repeated request from a fresh on-disk cache (a new ResultCache, as a new process has)."""
    with tempfile.TemporaryDirectory() as folder:
        key = ResultCache.key(qa_model.fingerprint, example, ExplainSettings())
        ResultCache(folder).put(key, result)
        started = time.perf_counter()
        cached, hit = cached_explain(qa_model, example, ExplainSettings(), ResultCache(folder))
        seconds = time.perf_counter() - started
    if not (hit and np.allclose(cached.scores, result.scores, rtol=2**-23, atol=0)):  # kept as float32
        raise RuntimeError("the result cache did not return the stored result")
    return seconds


def format_table(report: dict) -> str:
    same, accurate = report["same_work"], report["time_to_accuracy"]
    rows = [
        f"model {report['model']} ({report['architecture']}, {report['layers']} layers incl. embeddings), "
        f"{report['tokens']} tokens, {report['device']}, {report['torch_threads']} threads",
        f"{'':<22}{'Captum loop':>14}{'engine':>12}{'speed-up':>10}",
        f"{'same work':<22}{same['captum_seconds']:>13.2f}s{same['engine_seconds']:>11.2f}s{same['speedup']:>9.2f}x"
        f"   max rel diff {same['max_rel_diff']:.1e} ({same['steps']} GL steps, start+end)",
        f"{'time to accuracy':<22}{accurate['captum_seconds']:>13.2f}s{accurate['engine_seconds']:>11.2f}s"
        f"{accurate['speedup']:>9.2f}x   worst completeness error: Captum {accurate['captum_completeness_error']:.2%}"
        f" at {accurate['captum_steps']} steps, engine {accurate['engine_completeness_error']:.2%}",
        f"{'':<58}worst token-score error against {accurate['reference_steps']} GL steps: "
        f"Captum {accurate['captum_token_error']:.2%}, engine {accurate['engine_token_error']:.2%}",
        f"all layers, default settings: {report['all_layers_seconds']:.2f} s (steps per layer "
        f"{report['all_layers_steps']}, worst completeness error {report['all_layers_completeness_error']:.2%})",
        f"all layers, {report['fixed_steps']} fixed Gauss-Legendre steps: {report['fixed_steps_seconds']:.2f} s",
        f"repeated request from the disk cache: {1000 * report['cache_hit_seconds']:.0f} ms",
        f"peak RSS: {report['peak_rss_mb']:.0f} MB (engine), {report['peak_rss_mb_with_captum']:.0f} MB after the Captum runs",
    ]
    if fast := report["reduced_precision"]:
        rows.append(f"default settings, {fast['precision']} matmul precision: {fast['seconds']:.2f} s, worst "
                    f"completeness error {fast['completeness_error']:.2%} (float32 "
                    f"{fast['full_precision_completeness_error']:.2%}), token scores within "
                    f"{fast['max_rel_diff']:.1e} of float32's")
    return "\n".join(rows)
