"""Which attention heads carry the answer, for one question: the case (the window and span) every head score reads,
and each head knocked out (the ground truth of necessity).

F is the explained span's log-likelihood in the window, what a QA model is trained to raise: log softmax(start
logits)[s] + log softmax(end logits)[e], with s and e the span's first and last tokens. A head's knock-out is the
change in F when the head's context is replaced by its fill (rcqa.attention_heads.gates: zero, or its mean over the passage),
all heads of all layers in batched forwards of the gated copy, and whether the window's best answer changes. The
scores that try to predict it are rcqa.attention_heads.registry's.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

from rcqa.adapter.discovery import adapter_of
from rcqa.attention_heads.gates import HeadLayout, gated_model, head_layout, knock_out_each
from rcqa.attention_heads.memory import HeadsWindow, knockout_rows, scoring_budget_mb
from rcqa.attribution.window import window_inputs
from rcqa.model import QAModel
from rcqa.qa import answer_with_windows, encode
from rcqa.spans import Windows, decode
from rcqa.types import Answer, Example, Span


@dataclass(frozen=True)
class HeadCase:
    """One window of one question: the model's answer, the window (its index among the passage's windows, its
    inputs and tokens, and the window as decode reads it), and the span whose log-likelihood F is."""

    answer: Answer
    window_index: int
    inputs: dict[str, torch.Tensor]  # 1 × tokens, no padding
    tokens: list[str]
    window: Windows
    passage: str
    span: Span  # its tokens in this window

    @property
    def passage_mask(self) -> torch.Tensor:
        return self.window.passage_mask.to(torch.float32)


@dataclass(frozen=True)
class HeadKnockouts:
    """Every head knocked out in turn: the change in F (layers × heads), whether the best answer changed, and the
    answer read after each."""

    unchanged: float  # F with every head in place
    delta_log_likelihood: np.ndarray  # layers × heads
    flips: np.ndarray  # layers × heads, bool
    answers: tuple[tuple[str, ...], ...]  # layers × heads


def head_case(qa_model: QAModel, passage: str, question: str, span: Span | None = None) -> HeadCase:
    """The window of the model's best answer (or of the span given) with that span."""
    answer, windows = answer_with_windows(qa_model, passage, question, n_best=1, allow_null=False)
    span = span or answer.best
    if span is None:
        raise ValueError("the model finds no span to explain in this passage")
    inputs = window_inputs(windows, span.window)
    length = inputs["input_ids"].shape[1]
    window = replace(windows, inputs=inputs, offsets=[windows.offsets[span.window][:length]],
                     passage_mask=windows.passage_mask[span.window:span.window + 1, :length],
                     segments=[windows.segments[span.window][:length]],
                     word_ids=[windows.word_ids[span.window][:length]])
    tokens = qa_model.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist())
    return HeadCase(answer, span.window, inputs, tokens, window, passage, replace(span, window=0))


def layout_of(qa_model: QAModel, case: HeadCase) -> HeadLayout:
    return layout_for_inputs(qa_model, case.inputs)


def layout_for(qa_model: QAModel, example: Example) -> HeadLayout:
    """The model's heads, found on the first window of an example (any input of the model's own serves)."""
    return layout_for_inputs(qa_model, window_inputs(encode(qa_model, example.question, example.passage), 0))


def layout_for_inputs(qa_model: QAModel, inputs: dict[str, torch.Tensor]) -> HeadLayout:
    adapter = adapter_of(qa_model.model, inputs)
    blocks = [block for block_list in adapter.blocks for block in block_list]
    return head_layout(qa_model.model, blocks, adapter.num_layers)


def span_log_likelihood(start_logits: torch.Tensor, end_logits: torch.Tensor, span: Span) -> torch.Tensor:
    """F per row: log softmax(start)[span's first token] + log softmax(end)[its last token], in float64."""
    start, end = start_logits.double(), end_logits.double()
    return (start.log_softmax(-1)[:, span.start_token] + end.log_softmax(-1)[:, span.end_token])


def gated_logits(qa_model: QAModel, case: HeadCase, layout: HeadLayout, gates: torch.Tensor,
                  fill: str) -> tuple[torch.Tensor, torch.Tensor]:
    rows = gates.shape[0]
    batch = {key: value.to(qa_model.device).repeat(rows, 1) for key, value in case.inputs.items()}
    mask = case.passage_mask.to(qa_model.device).repeat(rows, 1)
    output = gated_model(qa_model.model, layout, gates.to(qa_model.device), fill, mask)(**batch)
    return output.start_logits, output.end_logits


def knock_out_heads(qa_model: QAModel, case: HeadCase, fill: str = "zero", rows_per_forward: int | None = None,
                    on_rows: Callable[[int], None] | None = None) -> HeadKnockouts:
    """Each head of each layer knocked out alone (its context replaced by fill), in batched forwards of
    `rows_per_forward` rows (default: ROWS_PER_FORWARD, fewer where the memory budget asks:
    rcqa.attention_heads.memory.knockout_rows); on_rows(heads knocked out so far) told after each."""
    layout = layout_of(qa_model, case)
    if rows_per_forward is None:
        window = HeadsWindow.of(qa_model, case.inputs["input_ids"].shape[1])
        rows_per_forward = knockout_rows(window, scoring_budget_mb(qa_model.device))
    gates = knock_out_each(layout)
    with torch.no_grad():
        start, end = gated_logits(qa_model, case, layout, torch.ones(1, layout.layers, layout.heads), fill)
        unchanged = float(span_log_likelihood(start, end, case.span)[0])
        reference = _best(start[0], end[0], case)
        deltas, answers, flips = [], [], []
        for begin in range(0, gates.shape[0], rows_per_forward):
            start, end = gated_logits(qa_model, case, layout, gates[begin:begin + rows_per_forward], fill)
            deltas.extend((span_log_likelihood(start, end, case.span) - unchanged).tolist())
            for row in range(start.shape[0]):
                best = _best(start[row], end[row], case)
                answers.append(best.text if best else "")
                flips.append(_characters(best) != _characters(reference))
            if on_rows is not None:
                on_rows(len(deltas))
    shape = (layout.layers, layout.heads)
    return HeadKnockouts(unchanged, np.array(deltas).reshape(shape), np.array(flips).reshape(shape),
                         tuple(tuple(answers[layer * layout.heads:(layer + 1) * layout.heads])
                               for layer in range(layout.layers)))


def _best(start: torch.Tensor, end: torch.Tensor, case: HeadCase) -> Span | None:
    spans = decode(start[None].float().cpu(), end[None].float().cpu(), case.window, case.passage, n_best=1)
    return spans[0] if spans else None


def _characters(span: Span | None) -> tuple[int, int] | None:
    return (span.start_char, span.end_char) if span else None
