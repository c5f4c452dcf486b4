"""The window an explanation is taken at: the answer, the window and tokens of the explained span, the window's
model inputs, its words, and the input baselines' states (rcqa.attribution.engine attributes them)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from rcqa.types.settings import SpanSpec
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.targets import TargetError
from rcqa.model import QAModel
from rcqa.qa import (InputError, Reading, RunWindows, answer_settings, answer_with_logits, char_span_to_tokens,
                     encode, null_allowed, text_digest)
from rcqa.spans import Windows
from rcqa.text import word_at, written_words
from rcqa.types import Answer, Example, Word


@dataclass(frozen=True)
class ExplainedWindow:
    """The window an explanation is taken at, as the model reads it, and the token span its targets explain."""

    answer: Answer
    windows: Windows
    window: int
    start_token: int
    end_token: int
    inputs: dict[str, torch.Tensor]  # the window's model inputs without padding (1 × tokens), on the CPU
    logits: tuple[torch.Tensor, torch.Tensor]  # every window's start and end logits, as the answer was decoded

    @property
    def length(self) -> int:
        return self.inputs["input_ids"].shape[1]

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Per token: its characters in the question or the passage."""
        return self.windows.offsets[self.window][:self.length]

    @property
    def segments(self) -> list[str]:
        """Per token: 'question', 'passage' or 'special'."""
        return self.windows.segments[self.window][:self.length]

    @property
    def span(self) -> tuple[int, int, int]:
        """(window, start token, end token) of the explained span."""
        return self.window, self.start_token, self.end_token

    def span_text(self, passage: str) -> str:
        return passage[self.offsets[self.start_token][0]:self.offsets[self.end_token][1]]

    def words(self, passage: str) -> list[Word]:
        """The question's and the passage's words as written, with the window's tokens mapped onto them."""
        return token_words(self.offsets, self.segments, self.windows.question, passage)


def explained_window(qa_model: QAModel, example: Example, span: SpanSpec | str = "predicted",
                     allow_null: bool | None = None, reading: Reading | None = None,
                     run: RunWindows | None = None) -> ExplainedWindow:
    """Answer the example (allow_null as in rcqa.qa.answer; `reading`, the answer a page read already, where it
    fits: handed_answer; else the windows run by `run`, as answer_with_logits takes it) and find the window and
    tokens of the span to explain (rcqa.attribution.settings.SpanSpec). 'predicted' is the best span, also when the
    model rejected it for "no answer"."""
    answer, windows, logits = (handed_answer(qa_model, example, allow_null, reading)
                               or answer_with_logits(qa_model, example.passage, example.question,
                                                     allow_null=allow_null, run=run))
    window, start_token, end_token = span_tokens(SpanSpec.parse(span), example, answer, windows)
    return ExplainedWindow(answer, windows, window, start_token, end_token, window_inputs(windows, window), logits)


def handed_answer(qa_model: QAModel, example: Example, allow_null: bool | None, reading: Reading | None
                  ) -> tuple[Answer, Windows, tuple[torch.Tensor, torch.Tensor]] | None:
    """The handed reading as answer_with_logits gives it (its windows cut again: a tokenising, no forward pass),
    where this model read this example's text and it is its answer as the model decodes it with allow_null, and its logits
    are the shape of those windows; None otherwise (none handed, or a stale one: the example is then read afresh)."""
    if reading is None or reading.text != text_digest(example.passage, example.question) or \
            reading.fingerprint != qa_model.fingerprint:
        return None
    if reading.answer.settings != answer_settings(qa_model, null_allowed(qa_model, allow_null)):
        return None
    windows = encode(qa_model, example.question, example.passage)
    shape = tuple(windows.inputs["input_ids"].shape)
    if reading.start_logits.shape != shape or reading.end_logits.shape != shape:
        return None
    return reading.answer, windows, reading.logits


def same_span(qa_model: QAModel, example: Example, answer: Answer, a: SpanSpec | str, b: SpanSpec | str) -> bool:
    """Whether the spans a and b (as explained_window reads them) are the same tokens of the same window, so that
    their explanations, everything else alike, are one; False where either does not exist (no gold answer, an
    n-best rank past the list). Tokenising the passage only: no forward pass."""
    windows = encode(qa_model, example.question, example.passage)
    try:
        return (span_tokens(SpanSpec.parse(a), example, answer, windows)
                == span_tokens(SpanSpec.parse(b), example, answer, windows))
    except InputError:
        return False


def span_tokens(span: SpanSpec, example: Example, answer: Answer, windows: Windows) -> tuple[int, int, int]:
    """(window, start token, end token) of the span the targets are taken at."""
    if span.kind != "gold":  # "predicted" and "nbest:0" are the best span, also when the model rejected it
        if span.rank >= max(1, len(answer.nbest)):
            raise TargetError(f"there are only {len(answer.nbest)} candidate spans; {span} does not exist")
        chosen = answer.nbest[span.rank] if span.rank else answer.best
        if chosen is None:
            raise TargetError("the model found no candidate span in this passage, so there is none to explain")
        return chosen.window, chosen.start_token, chosen.end_token
    if not example.answers or example.answers[0].start_char < 0:
        raise TargetError("this example has no gold answer with a position in the passage")
    gold = example.answers[0]
    found = char_span_to_tokens(windows, gold.start_char, gold.start_char + len(gold.text))
    if found is None:
        raise TargetError("the gold answer does not fit in any window of the passage")
    return found


def window_inputs(windows: Windows, window: int) -> dict[str, torch.Tensor]:
    """One window's model inputs, without padding (so softmaxes run over real tokens only)."""
    length = int(windows.inputs["attention_mask"][window].sum())
    return {k: v[window:window + 1, :length] for k, v in windows.inputs.items()}


def padded_batch(tokenizer, inputs: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Several windows' inputs (each 1 × its tokens, as window_inputs gives them) as one batch padded on the right
    by the tokenizer, the attention mask marking each one's own tokens."""
    features = [{name: values[0].tolist() for name, values in item.items()} for item in inputs]
    return dict(tokenizer.pad(features, padding="longest", padding_side="right", return_tensors="pt"))


def on_device(inputs: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device) for k, v in inputs.items()}


def baseline_stack(qa_model: QAModel, inputs: dict[str, torch.Tensor], kind: str) -> LayerStack | None:
    """The layer states of an input baseline ("pad", "mask": every token but [CLS]/[SEP] replaced), or None for the
    zero baseline, which has no input."""
    if kind == "zero":
        return None
    return LayerStack(qa_model.model, on_device(_baseline_inputs(qa_model, inputs, kind), qa_model.device))


def _baseline_inputs(qa_model: QAModel, inputs: dict[str, torch.Tensor], kind: str) -> dict[str, torch.Tensor]:
    tokenizer = qa_model.tokenizer
    replacement = tokenizer.pad_token_id if kind == "pad" else tokenizer.mask_token_id
    ids = inputs["input_ids"]
    special = torch.tensor(tokenizer.get_special_tokens_mask(ids[0].tolist(), already_has_special_tokens=True),
                           dtype=torch.bool)[None]
    return {**inputs, "input_ids": torch.where(special, ids, torch.full_like(ids, replacement))}


def token_words(offsets: Sequence[tuple[int, int]], segments: Sequence[str], question: str,
                passage: str) -> list[Word]:
    """The question's and the passage's words as written, each with the tokens (their offsets and segments given)
    mapped onto it as the answers map them (rcqa.text.word_at). Words no token reaches are left out."""
    words = []
    for segment, text in (("question", question), ("passage", passage)):
        written = written_words(text)
        tokens = [t for t in range(len(offsets)) if segments[t] == segment and offsets[t][1] > offsets[t][0]]
        if not written or not tokens:
            continue
        held = word_at(torch.tensor([w.start_char for w in written]), torch.tensor([w.end_char for w in written]),
                       torch.tensor([offsets[t][0] for t in tokens]))
        pieces: dict[int, list[int]] = {}
        for token, index in zip(tokens, held.tolist()):
            pieces.setdefault(index, []).append(token)
        words += [Word(text=written[i].text, start_char=written[i].start_char, end_char=written[i].end_char,
                       segment=segment, tokens=tuple(found), tag=written[i].tag) for i, found in pieces.items()]
    return sorted(words, key=lambda word: word.tokens[0])
