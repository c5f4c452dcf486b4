"""Delete passage words and re-answer: every variant of the window in one batched forward of the model.

Three deletion operators:

- `pad` (the default, Wu & Ong's): every word-piece of a deleted word becomes [PAD], with the attention mask
  kept at 1. The positions do not move, so the explained span is measured where it was, whatever is deleted.
  [PAD] inside a text is out of the distribution the model was trained on, which makes this a strong
  perturbation: it is the operator the paper's numbers come from.
- `remove`: the deleted word-pieces are taken out and the tokens after them move up, as if the words had never
  been written. A span whose start or end token is deleted has probability 0.
- `mask`: as `pad`, with the tokenizer's mask token ([MASK], <mask>), or its unknown token where it has no mask:
  the token a masked-language-model encoder was pre-trained to read in place of a missing word.

IG's default baseline is the `pad` replacement (every passage token [PAD]), so under `pad` IG's path ends where the
deletions go, which favours IG; `remove` and `mask` do not share that baseline.

With either, a deleted word cannot be part of an answer any more: the re-answer is the best whole-word span
(rcqa.spans.decode) among the window's passage tokens that are left.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rcqa.attribution.memory import in_chunks
from rcqa.attribution.methods.base import Case
from rcqa.spans import Windows, decode
from rcqa.types import Word, overlaps

BATCH_SIZE = 16  # variants per forward: on 1 CPU thread, 256-token batches of 16 took about 20 % less per variant than
# batches of 1 or of 64 (one measurement)
OPERATORS = {
    "pad": "each deleted word's tokens become [PAD], attention mask kept (Wu & Ong); positions do not move",
    "remove": "each deleted word's tokens are taken out of the input; the tokens after them move up",
    "mask": "each deleted word's tokens become the tokenizer's mask token ([MASK]; [UNK] where it has none), "
            "attention mask kept",
}


def replacement_id(tokenizer, operator: str) -> int:
    """The token a deleted word-piece becomes under a replacing operator (pad or mask)."""
    if operator == "pad":
        return tokenizer.pad_token_id
    for token_id in (tokenizer.mask_token_id, tokenizer.unk_token_id):
        if token_id is not None:
            return token_id
    raise ValueError("the mask operator needs a tokenizer with a mask or an unknown token; this one has neither")


@dataclass(frozen=True)
class Reanswer:
    """The window answered again with some passage words deleted."""

    span_probability: float  # p(start) · p(end) of the explained span (softmax over the input's tokens); 0 if gone
    answer: tuple[int, int] | None  # passage characters of the best whole-word answer left; None if none is left
    text: str  # that answer as the model read it: its characters without those of deleted words

    @classmethod
    def from_dict(cls, data: dict) -> Reanswer:
        return cls(data["span_probability"], tuple(data["answer"]) if data["answer"] else None, data["text"])


def reanswer(case: Case, deletions: Sequence[Collection[int]], operator: str = "pad",
             batch_size: int = BATCH_SIZE, answered: Callable[[int, int], None] | None = None) -> list[Reanswer]:
    """The window re-answered once per set of deleted passage words (indices into case.passage_words()), in
    batched forwards of batch_size variants, answered(variants done, variants in all) told after each batch. The
    variants are batched longest first, so that `remove` batches hold inputs of about one length: each batch is as
    long as its longest input, and the rest is padding."""
    if operator not in OPERATORS:
        raise ValueError(f"unknown deletion operator {operator!r}; choose one of {', '.join(OPERATORS)}")
    words = case.passage_words()
    order = sorted(range(len(deletions)), key=lambda row: sum(len(words[index].tokens) for index in deletions[row]))
    answers = []

    def batch(begin: int, end: int) -> None:
        answers.extend(_reanswer_batch(case, [deletions[row] for row in order[begin:end]], operator))
        if answered is not None:
            answered(end, len(order))

    in_chunks(len(order), batch_size, batch, case.qa_model.device)  # a batch out of memory is halved
    return [answer for _, answer in sorted(zip(order, answers), key=lambda pair: pair[0])]


def _reanswer_batch(case: Case, deletions: Sequence[Collection[int]], operator: str) -> list[Reanswer]:
    words = case.passage_words()
    deleted = np.zeros((len(deletions), case.length), dtype=bool)
    for row, chosen in enumerate(deletions):
        for index in chosen:
            deleted[row, list(words[index].tokens)] = True
    tokenizer = case.qa_model.tokenizer
    replacement = tokenizer.pad_token_id if operator == "remove" else replacement_id(tokenizer, operator)
    batch, positions = _variants(case.window.inputs, deleted, replacement, operator)
    with torch.inference_mode():
        output = case.qa_model.model(**{name: values.to(case.qa_model.device) for name, values in batch.items()})
    real = batch["attention_mask"].bool()
    start, end = (logits.float().cpu().masked_fill(~real, float("-inf")) for logits in (output.start_logits,
                                                                                        output.end_logits))
    start_log_p, end_log_p = start.log_softmax(-1), end.log_softmax(-1)
    span_start, span_end = positions[:, case.target.start_token], positions[:, case.target.end_token]
    results = []
    for row, chosen in enumerate(deletions):
        found = span_start[row] >= 0 and span_end[row] >= 0
        probability = float((start_log_p[row, span_start[row]] + end_log_p[row, span_end[row]]).exp()) if found else 0.0
        gone = [words[index] for index in chosen]
        answer = _best_answer(case, start[row], end[row], positions[row], deleted[row], gone)
        results.append(Reanswer(probability, answer, _text_without(case.example.passage, answer, gone)))
    return results


def _variants(inputs: dict[str, torch.Tensor], deleted: np.ndarray, pad_id: int,
              operator: str) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """The batch of inputs (variants × tokens) and, per variant and original token, its position in the variant
    (-1 where it was removed). Replacing operators put pad_id in each deleted token's place. Removal makes variants
    of different lengths: they are padded (pad_id) at the end, with attention mask 0, and the padding is kept out of
    every softmax."""
    count, length = deleted.shape
    if operator != "remove":
        batch = {name: values.expand(count, -1).clone() for name, values in inputs.items()}
        batch["input_ids"] = batch["input_ids"].masked_fill(torch.from_numpy(deleted), pad_id)
        return batch, np.broadcast_to(np.arange(length), deleted.shape)
    kept = ~deleted
    width = int(kept.sum(axis=1).max())
    batch = {name: torch.full((count, width), pad_id if name == "input_ids" else 0, dtype=values.dtype)
             for name, values in inputs.items()}
    for row in range(count):
        keep = torch.from_numpy(kept[row])
        for name, values in inputs.items():
            batch[name][row, :int(keep.sum())] = values[0, keep]  # the attention mask: 1 on every kept token
    return batch, np.where(kept, kept.cumsum(axis=1) - 1, -1)


def _best_answer(case: Case, start: torch.Tensor, end: torch.Tensor, positions: np.ndarray, deleted: np.ndarray,
                 gone: list[Word]) -> tuple[int, int] | None:
    """Passage characters of the best whole-word answer that starts and ends on words left (of the 20 best)."""
    kept = positions >= 0
    width = int(positions.max()) + 1
    offsets = np.zeros((width, 2), dtype=int)
    offsets[positions[kept]] = np.asarray(case.window.offsets)[kept]
    answerable = np.zeros((1, width), dtype=bool)
    answerable[0, positions[kept]] = (np.asarray(case.window.segments) == "passage")[kept] & ~deleted[kept]
    spans = decode(start[None, :width], end[None, :width],
                   Windows(inputs={}, offsets=[list(map(tuple, offsets.tolist()))],
                           passage_mask=torch.from_numpy(answerable)), case.example.passage)
    # a whole-word answer grows from its tokens to whole words, which may reach over punctuation onto deleted words
    starts, ends = {w.start_char for w in gone}, {w.end_char for w in gone}
    return next(((span.start_char, span.end_char) for span in spans
                 if span.start_char not in starts and span.end_char not in ends), None)


def _text_without(passage: str, answer: tuple[int, int] | None, deleted: list[Word]) -> str:
    """The answer's text with the characters of deleted words cut out (what the model could have read there)."""
    if answer is None:
        return ""
    start, end = answer
    pieces, cursor = [], start
    for word in sorted((w for w in deleted if overlaps(start, end, w.start_char, w.end_char)),
                       key=lambda w: w.start_char):
        pieces.append(passage[cursor:word.start_char])
        cursor = word.end_char
    pieces.append(passage[cursor:end])
    return " ".join("".join(pieces).split())
