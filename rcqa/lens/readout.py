"""The answer lens: the answer each layer's hidden states already hold, read by the model's own QA head and by the
trained probes, and decoded exactly as the model's answers are (rcqa.spans: whole-word n-best over every window).

Layer l is the output of the l-th block the model runs (layer 0: the embeddings), labelled as the model's adapter
labels it (rcqa.adapter: "block i", or an encoder-decoder's "encoder block i" then "decoder block i"), as
everywhere in rcqa. Read by the head,
the last layer gives the model's own answer, bit for bit: the states come from the same forward passes, in the
same batches of windows, as the answer's logits.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rcqa.attribution.stack import LayerStack
from rcqa.attribution.window import window_inputs
from rcqa.evaluate import score
from rcqa.lens.probes import Probes, ProbesUnavailable, find_probes
from rcqa.model import QAModel
from rcqa.qa import WINDOW_BATCH, Progress, answer_with_logits, logits
from rcqa.spans import Windows, answer_standing, decode
from rcqa.types import Answer, Example, ResultHeader, Span

READERS = {"head": "the model's own QA head applied to the layer's states",
           "probe": "linear start/end probes trained on the layer's states, the model frozen"}
READING_FIELDS = ("span", "probability", "final_answer_rank", "final_answer_probability", "em", "f1")


@dataclass(frozen=True)
class LayerReading:
    """What one reader answers from one layer: its best whole-word span (None when no span answers with a word),
    the rank (1 = best) and probability there of the model's final answer, and EM / F1 of the span against the
    gold answers (None without gold)."""

    span: Span | None
    final_answer_rank: int | None
    final_answer_probability: float
    em: float | None = None
    f1: float | None = None

    @property
    def probability(self) -> float:
        return self.span.probability if self.span else 0.0

    def to_dict(self) -> dict:
        span = self.span
        return {"span": span.text if span else None, "start_char": span.start_char if span else None,
                "end_char": span.end_char if span else None, "probability": self.probability,
                "final_answer_rank": self.final_answer_rank,
                "final_answer_probability": self.final_answer_probability, "em": self.em, "f1": self.f1}

    @classmethod
    def from_dict(cls, data: dict, span: dict | None) -> LayerReading:
        """The reading of to_dict's dictionary, with its best span whole (Span.to_dict's, which to_dict shortens)."""
        return cls(Span(**{k: v for k, v in span.items() if k != "score"}) if span else None,
                   data["final_answer_rank"], data["final_answer_probability"], data["em"], data["f1"])


@dataclass(repr=False)
class AnswerLens(ResultHeader):
    """Per reader ("head", "probe") and layer, what the layer's states answer; the model's own answer beside (its
    window and that window's tokens are the header's: the lens itself reads every window)."""

    layers: list[str]
    readings: dict[str, list[LayerReading]]
    probes: dict | None = None  # the probes' report (training, dev scores) when they were read
    note: str = ""  # why the probes were not read

    kind = "answer_lens"

    def to_dict(self) -> dict:
        best = self.answer.best
        return {
            **self.header_dict(),
            "final_answer": {"span": best.text, "start_char": best.start_char, "end_char": best.end_char,
                             "probability": best.probability} if best else None,
            "readers": READERS, "probes": self.probes, "probe_note": self.note or None,
            "layers": [{"layer": layer, "label": label,
                        **{reader: self.readings[reader][layer].to_dict() if reader in self.readings else None
                           for reader in READERS}}
                       for layer, label in enumerate(self.layers)],
        }

    def stored_dict(self) -> dict:
        """to_dict's fields and, per reader and layer, the best span whole, for load."""
        return {**self.to_dict(), "best_spans": {reader: [r.span.to_dict() if r.span else None for r in readings]
                                                 for reader, readings in self.readings.items()}}

    @classmethod
    def from_dict(cls, data: dict) -> AnswerLens:
        """The lens stored_dict wrote."""
        return cls(**cls.header_fields(data), layers=[layer["label"] for layer in data["layers"]],
                   readings={reader: [LayerReading.from_dict(layer[reader], span)
                                      for layer, span in zip(data["layers"], spans)]
                             for reader, spans in data["best_spans"].items()},
                   probes=data["probes"], note=data["probe_note"] or "")


def answer_lens(qa_model: QAModel, example: Example, progress: Progress | None = None) -> AnswerLens:
    """The lens with every reader the model has: its head, and its probes when some were trained for it."""
    try:
        probes = find_probes(qa_model)
    except ProbesUnavailable as missing:
        return read_layers(qa_model, example, note=str(missing), progress=progress)
    return read_layers(qa_model, example, probes, progress=progress)


def read_layers(qa_model: QAModel, example: Example, probes: Probes | None = None, note: str = "",
                progress: Progress | None = None) -> AnswerLens:
    """Read the answer out of every layer of every window: with the head, and with probes if given. `progress` is
    told after each batch of windows answered and read at every layer, and after each layer decoded, each of the
    three counted as a third of the work: a long paste's lens takes many seconds, and a server stops it there."""
    told = progress or (lambda share, where: None)
    answer, windows, _ = answer_with_logits(qa_model, example.passage, example.question,
                                            run=functools.partial(logits, progress=_part(told, 0, "answering")))
    reading = _part(told, 1, "reading every layer")
    readers: dict[str, Callable[[LayerStack, int, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]] = {
        "head": lambda stack, layer, states: stack.run_from(stack.num_layers, states)}  # above the top: the head
    if probes is not None:
        readers["probe"] = lambda stack, layer, states: probes.logits(layer, states)
    layer_logits: dict[str, list[list[tuple[torch.Tensor, ...]]]] = {name: [] for name in readers}  # per reader, per batch: layers × (start, end), batch × tokens
    with torch.no_grad():
        for begin in range(0, len(windows), WINDOW_BATCH):  # the batches the answer's logits were computed in
            stack = LayerStack(qa_model.model, {k: v[begin:begin + WINDOW_BATCH].to(qa_model.device)
                                                for k, v in windows.inputs.items()})
            for name, reader in readers.items():
                layer_logits[name].append([tuple(part.float().cpu() for part in reader(stack, layer, states))
                                           for layer, states in enumerate(stack.hidden)])
            top, labels = stack.num_layers, stack.labels
            del stack  # its states are 4 MB a window; only the logits are kept
            done = min(begin + WINDOW_BATCH, len(windows))
            reading(done / len(windows), f"window {done}/{len(windows)}")
    decoding = _part(told, 2, "decoding each layer's answer")
    readings: dict[str, list[LayerReading]] = {name: [] for name in layer_logits}
    for layer in range(top + 1):
        for name, batches in layer_logits.items():
            readings[name].append(_reading(*_joined(batches, layer), windows, example, answer))
        decoding((layer + 1) / (top + 1), labels[layer])
    window = answer.best.window if answer.best else 0
    return AnswerLens(example=example, model=qa_model.name, fingerprint=qa_model.fingerprint, answer=answer,
                      window=window, tokens=qa_model.tokenizer.convert_ids_to_tokens(
                          window_inputs(windows, window)["input_ids"][0].tolist()),
                      layers=labels, readings=readings,
                      probes=probes.report if probes is not None else None, note=note)


def _part(progress: Progress, third: int, where: str) -> Progress:
    """progress told of one third of the lens's work: its share of the whole, and where it is."""
    return lambda share, within: progress((third + share) / 3, f"{where}: {within}")


def _joined(batches: list[list[tuple[torch.Tensor, ...]]], layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A layer's start and end logits of every batch, joined (windows × tokens)."""
    start, end = (torch.cat(part) for part in zip(*(batch[layer] for batch in batches)))
    return start, end


def _reading(start: torch.Tensor, end: torch.Tensor, windows: Windows, example: Example,
             answer: Answer) -> LayerReading:
    spans = decode(start, end, windows, example.passage, n_best=1)
    best, final = (spans[0] if spans else None), answer.best
    rank, probability = (answer_standing(start, end, windows, example.passage,
                                         (final.window, final.start_token, final.end_token))
                         if final else (None, 0.0))
    golds = [a.text for a in example.answers]
    em, f1 = score(best.text if best else "", golds) if golds else (None, None)
    return LayerReading(best, rank, probability, em, f1)


def lens_row(lens: AnswerLens) -> dict:
    """The lens as columns of a dataset row: lens_<reader>_<field>, each a list over layers (embeddings first), or
    None for a reader the model lacks; fields as in LayerReading.to_dict ('span' is the span's text)."""
    return {f"lens_{reader}_{name}": ([reading.to_dict()[name] for reading in lens.readings[reader]]
                                      if reader in lens.readings else None)
            for reader in READERS for name in READING_FIELDS}


def layer_scores(qa_model: QAModel, examples: list[Example], probes: Probes | None = None,
                 progress: Callable[[Iterable], Iterable] = iter) -> dict:
    """Per reader and layer, percent EM and F1 of the layer's answer over the answerable examples (the official
    SQuAD v1.1 metrics), and the model's own, which the head's last layer equals."""
    answerable = [e for e in examples if e.answers and not e.is_impossible]
    totals: dict[str, np.ndarray] = {}
    for example in progress(answerable):
        lens = read_layers(qa_model, example, probes)
        for reader, readings in lens.readings.items():
            found = np.array([[r.em, r.f1] for r in readings])
            totals[reader] = totals.get(reader, 0) + found
        totals["model"] = totals.get("model", 0) + np.array(score(lens.answer.text, [a.text for a in example.answers]))
    count = max(len(answerable), 1)
    result: dict[str, Any] = {"questions": len(answerable)}
    for reader, total in totals.items():
        mean = np.round(100 * total / count, 2)
        result[reader] = {"exact_match": mean[..., 0].tolist(), "f1": mean[..., 1].tolist()}
    return result
