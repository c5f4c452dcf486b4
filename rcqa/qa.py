"""Answer a question about a passage: doc-stride windows, exact n-best span decoding, character offsets."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import torch

from rcqa.model import QAModel
from rcqa.types import Answer, Span

MAX_ANSWER_TOKENS = 30
MAX_PASSAGE_WORDS = 10_000
MAX_QUESTION_WORDS = 200
N_BEST = 20


class InputError(ValueError):
    """A passage or question the model cannot be asked about; the message says what to change."""


@dataclass(frozen=True)
class Windows:
    """The question + passage encoded as overlapping windows, as the model sees them."""

    inputs: dict[str, torch.Tensor]  # input_ids, attention_mask (+ token_type_ids): windows × tokens
    offsets: list[list[tuple[int, int]]]  # per window and token: character span in its own text
    passage_mask: torch.Tensor  # windows × tokens, True where the token belongs to the passage
    segments: list[list[str]] = ()  # per window and token: "question", "passage" or "special"
    word_ids: list[list[int | None]] = ()  # per window and token: word index within its own text
    question: str = ""  # the question as encoded (after truncation to max_query_len tokens)

    def __len__(self) -> int:
        return self.inputs["input_ids"].shape[0]


def validate(passage: str, question: str) -> None:
    """Refuse input that has no answer to give, with a message a user can act on."""
    for label, text, limit in (("passage", passage, MAX_PASSAGE_WORDS), ("question", question, MAX_QUESTION_WORDS)):
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"the {label} is empty")
        if _looks_binary(text):
            raise InputError(f"the {label} looks like binary data, not text")
        words = len(text.split())
        if words > limit:
            raise InputError(f"the {label} has {words:,} words; the limit is {limit:,}. "
                             f"Paste the part that holds the answer.")


def _looks_binary(text: str) -> bool:
    control = sum(1 for c in text if unicodedata.category(c) in ("Cc", "Cs", "Co") and c not in "\n\r\t")
    return "\x00" in text or control > max(2, 0.01 * len(text))


def encode(qa_model: QAModel, question: str, passage: str) -> Windows:
    """Split into windows of qa_model.max_len tokens, overlapping by qa_model.doc_stride."""
    tokenizer = qa_model.tokenizer
    question = truncate_question(tokenizer, question.strip(), qa_model.max_query_len)
    passage_budget = qa_model.max_len - len(tokenizer.tokenize(question)) - 4  # [CLS] q [SEP] p [SEP] (+1 for RoBERTa)
    stride = min(qa_model.doc_stride, passage_budget // 2)
    pad_right = tokenizer.padding_side == "right"
    encoded = tokenizer(
        question if pad_right else passage, passage if pad_right else question,
        truncation="only_second" if pad_right else "only_first", max_length=qa_model.max_len,
        stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True,
        padding="longest", return_tensors="pt",
    )
    names = {1 - int(pad_right): "question", int(pad_right): "passage", None: "special"}
    segments = [[names[s] for s in encoded.sequence_ids(w)] for w in range(len(encoded["input_ids"]))]
    passage_mask = torch.tensor([[s == "passage" for s in window] for window in segments])
    if not passage_mask.any():
        raise InputError("the passage has no tokens the model can read")
    inputs = {k: encoded[k] for k in tokenizer.model_input_names if k in encoded}
    offsets = [[tuple(pair) for pair in window.tolist()] for window in encoded["offset_mapping"]]
    return Windows(inputs=inputs, offsets=offsets, passage_mask=passage_mask, segments=segments,
                   word_ids=[encoded.word_ids(w) for w in range(len(segments))], question=question)


def char_span_to_tokens(windows: Windows, start_char: int, end_char: int) -> tuple[int, int, int] | None:
    """(window, start token, end token) of the first window whose passage holds the whole character span."""
    for window, offsets in enumerate(windows.offsets):
        passage = [t for t, inside in enumerate(windows.passage_mask[window].tolist()) if inside]
        span = token_span(offsets, passage, start_char, end_char)
        if span:
            return window, *span
    return None


def token_span(offsets: list[tuple[int, int]], passage_tokens: list[int], start_char: int,
               end_char: int) -> tuple[int, int] | None:
    """The first and last passage token covering [start_char, end_char), or None if the window misses it."""
    if not passage_tokens or offsets[passage_tokens[0]][0] > start_char or offsets[passage_tokens[-1]][1] < end_char:
        return None
    start = next(t for t in passage_tokens if offsets[t][1] > start_char)
    end = next(t for t in reversed(passage_tokens) if offsets[t][0] < end_char)
    return start, end


def truncate_question(tokenizer, question: str, max_query_len: int) -> str:
    tokens = tokenizer.tokenize(question)
    if len(tokens) <= max_query_len:
        return question
    return tokenizer.convert_tokens_to_string(tokens[:max_query_len])


@torch.inference_mode()
def logits(qa_model: QAModel, windows: Windows, batch_size: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """Start and end logits for every window (windows × tokens), computed in batches."""
    starts, ends = [], []
    for begin in range(0, len(windows), batch_size):
        batch = {k: v[begin:begin + batch_size].to(qa_model.device) for k, v in windows.inputs.items()}
        output = qa_model.model(**batch)
        starts.append(output.start_logits.float().cpu())
        ends.append(output.end_logits.float().cpu())
    return torch.cat(starts), torch.cat(ends)


def decode(start_logits: torch.Tensor, end_logits: torch.Tensor, windows: Windows, passage: str,
           n_best: int = N_BEST, max_answer_tokens: int = MAX_ANSWER_TOKENS) -> list[Span]:
    """The n best valid spans over all windows, exactly: start ≤ end, at most max_answer_tokens long,
    both ends in the passage. Probability is the softmax of start+end over every valid span of every
    window; a character span seen in two overlapping windows is listed once, with its best score."""
    length = start_logits.shape[1]
    scores = start_logits[:, :, None] + end_logits[:, None, :]
    positions = torch.arange(length)
    offset = positions[None, :] - positions[:, None]
    valid = (offset >= 0) & (offset < max_answer_tokens)
    valid = valid[None] & windows.passage_mask[:, :, None] & windows.passage_mask[:, None, :]
    scores = scores.masked_fill(~valid, float("-inf"))
    log_normaliser = torch.logsumexp(scores.flatten(), dim=0)
    n_valid = int(valid.sum())
    candidates = min(n_valid, 4 * n_best)
    while True:  # overlapping windows repeat spans: widen the top-k until n_best distinct ones are in
        spans = _distinct_spans(scores, candidates, n_best, windows, passage, start_logits, end_logits, log_normaliser)
        if len(spans) == n_best or candidates == n_valid:
            return spans
        candidates = min(n_valid, 2 * candidates)


def _distinct_spans(scores, candidates, n_best, windows, passage, start_logits, end_logits, log_normaliser) -> list[Span]:
    length = scores.shape[1]
    top_scores, top_index = torch.topk(scores.flatten(), candidates)
    spans: dict[tuple[int, int], Span] = {}
    for score, flat in zip(top_scores.tolist(), top_index.tolist()):
        window, rest = divmod(flat, length * length)
        start, end = divmod(rest, length)
        start_char, end_char = windows.offsets[window][start][0], windows.offsets[window][end][1]
        if (start_char, end_char) in spans:
            continue
        spans[(start_char, end_char)] = Span(
            text=passage[start_char:end_char], start_char=start_char, end_char=end_char,
            start_token=start, end_token=end, window=window,
            start_logit=float(start_logits[window, start]), end_logit=float(end_logits[window, end]),
            probability=float(torch.exp(torch.tensor(score) - log_normaliser)),
        )
        if len(spans) == n_best:
            break
    return list(spans.values())


def answer(qa_model: QAModel, passage: str, question: str, n_best: int = N_BEST,
           max_answer_tokens: int = MAX_ANSWER_TOKENS) -> Answer:
    """The model's n-best answers to question about passage (InputError for unusable input)."""
    return answer_with_windows(qa_model, passage, question, n_best, max_answer_tokens)[0]


def answer_with_windows(qa_model: QAModel, passage: str, question: str, n_best: int = N_BEST,
                        max_answer_tokens: int = MAX_ANSWER_TOKENS) -> tuple[Answer, Windows]:
    """The answer and the windows it was read from (what attribution needs to see the same input)."""
    validate(passage, question)
    windows = encode(qa_model, question, passage)
    start_logits, end_logits = logits(qa_model, windows)
    spans = decode(start_logits, end_logits, windows, passage, n_best, max_answer_tokens)
    settings = {"model": qa_model.name, "max_len": qa_model.max_len, "doc_stride": qa_model.doc_stride,
                "max_answer_tokens": max_answer_tokens, "n_best": n_best}
    return Answer(question=question, nbest=tuple(spans), n_windows=len(windows), settings=settings), windows
