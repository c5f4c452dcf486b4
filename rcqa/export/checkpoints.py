"""A run's kept models (step-N/, then final/): each written as fp16 weights, scored on the run's held-out
questions, and the best of them by held-out v2.0 F1."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import torch

from rcqa.evaluate import evaluate_v2
from rcqa.lens.probes import REPORT_FILE, WEIGHTS_FILE
from rcqa.model import QAModel, load_model
from rcqa.qa import best_span_and_null_odds
from rcqa.types import Example


Progress = Callable[[Iterable], Iterable]


def kept_models(run_dir: str | Path) -> list[Path]:
    """A run's kept models in training order: step-N/ by N, then final/."""
    run_dir = Path(run_dir)
    steps = sorted(run_dir.glob("step-*"), key=lambda p: int(p.name.removeprefix("step-")))
    return [p for p in [*steps, run_dir / "final"] if (p / "config.json").is_file()]


def export(run_dir: str | Path, target: str | Path, checkpoint: str = "final") -> Path:
    """Write a kept model of the run (final/ or step-N/) as fp16 safetensors (loaded back as fp32) with its tokenizer;
    write_card then gives it its card."""
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    source, target = Path(run_dir) / checkpoint, Path(target)
    model = AutoModelForQuestionAnswering.from_pretrained(source, dtype=torch.float32)
    target.mkdir(parents=True, exist_ok=True)
    model.half().save_pretrained(target, safe_serialization=True)
    AutoTokenizer.from_pretrained(source).save_pretrained(target)
    for stale in (REPORT_FILE, WEIGHTS_FILE):  # probes of the weights and card replaced: `rcqa probes` trains anew
        (target / stale).unlink(missing_ok=True)
    return target


def null_predictions(qa_model: QAModel, examples: list[Example], progress: Progress = iter) -> dict[str, tuple]:
    """Each question's best span and null odds, read once: the v2.0 metrics at every threshold, and the v1.1
    metrics with answers forced, are all computed from them."""
    return {e.id: best_span_and_null_odds(qa_model, e.passage, e.question) for e in progress(examples)}


def held_out_scores(run_dir: str | Path, held_out: list[Example], progress: Progress = iter) -> dict[str, dict]:
    """The official v2.0 metrics of every kept model of the run on its held-out questions (best_f1 and its
    threshold among them), keyed by the kept model's folder name."""
    scores = {}
    for folder in kept_models(run_dir):
        predictions = null_predictions(load_model(str(folder)), held_out, progress)
        scores[folder.name] = evaluate_v2(held_out, lambda e: predictions[e.id], None)
    return scores


def best_checkpoint(scores: dict[str, dict]) -> str:
    """The kept model with the highest held-out best_f1; the earlier one of a tie (less training, same score)."""
    return max(scores, key=lambda name: (scores[name]["best_f1"], -list(scores).index(name)))
