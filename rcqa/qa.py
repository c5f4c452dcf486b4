"""Answer a question about a passage: doc-stride windows, exact whole-word n-best decoding, character offsets."""
from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

import torch

from rcqa.model import QAModel
from rcqa.text import WrittenWord, written_words
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
    if all(word.is_punctuation for word in written_words(passage)):
        raise InputError("the passage has no words, only punctuation or markup")


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
    """The n most probable whole-word answers over all windows, exactly.

    A valid token span (start ≤ end, at most max_answer_tokens long, both ends in the passage) answers
    with whole written words: from the word holding its start token to the word holding its end token,
    less the punctuation and markup words at either end. A span of punctuation only answers nothing and
    is left out; every other one has the softmax probability of start+end over all of them, in every
    window, and adds it to the probability of the characters it answers with, so that the answers'
    probabilities sum to 1.

    Each Span's window is that of the answer's best-scoring token span, and its tokens are the first and
    last tokens of that window covering the answer's characters, so that explaining the span explains the
    whole-word answer. When a word is cut by that window's edge, the first window holding the whole answer
    is taken; if none does, the best token span itself (the text is still the whole-word answer).
    """
    words = _passage_words(passage)
    window, start, end, score = _valid_token_spans(start_logits, end_logits, windows.passage_mask,
                                                   max_answer_tokens)
    token_word = words.of_tokens(torch.tensor(windows.offsets))
    first, last = words.next_content[token_word[window, start]], words.previous_content[token_word[window, end]]
    answered = first <= last
    window, start, end, score, first, last = (t[answered] for t in (window, start, end, score, first, last))
    if not len(score):
        return []
    answers, group = torch.unique(first * len(words.words) + last, return_inverse=True)
    probability, best_score, best_entry = _merge(score, group, len(answers))
    passage_tokens = [torch.nonzero(row).flatten().tolist() for row in windows.passage_mask]
    return [_whole_word_span(words.words[int(answers[a]) // len(words.words)],
                             words.words[int(answers[a]) % len(words.words)],
                             (int(window[e]), int(start[e]), int(end[e])), float(probability[a]),
                             windows, passage_tokens, passage, start_logits, end_logits)
            for a, e in ((a, int(best_entry[a])) for a in _ranked(probability, best_score, n_best))]


@dataclass(frozen=True)
class _PassageWords:
    """A passage's written words, with what decoding asks of them on every answer, computed once."""

    words: tuple[WrittenWord, ...]
    start_char: torch.Tensor
    end_char: torch.Tensor
    next_content: torch.Tensor  # per word: the first word at or after it that is not punctuation (or len)
    previous_content: torch.Tensor  # per word: the last word at or before it that is not punctuation (or -1)

    def of_tokens(self, offsets: torch.Tensor) -> torch.Tensor:
        """windows × tokens: the word holding each token's first character, or, for a token that starts
        in the space between words, the word after it (the one it overlaps)."""
        first_char = offsets[..., 0].contiguous()
        word = (torch.searchsorted(self.start_char, first_char, right=True) - 1).clamp(min=0)
        between = first_char >= self.end_char[word]
        return torch.where(between, (word + 1).clamp(max=len(self.words) - 1), word)


@functools.lru_cache(maxsize=512)
def _passage_words(passage: str) -> _PassageWords:
    words = written_words(passage) or (WrittenWord("", 0, 0, ""),)  # a blank passage: one empty non-word
    index = torch.arange(len(words))
    content = torch.tensor([not w.is_punctuation for w in words])
    return _PassageWords(
        words=words, start_char=torch.tensor([w.start_char for w in words]),
        end_char=torch.tensor([w.end_char for w in words]),
        next_content=torch.where(content, index, len(words)).flip(0).cummin(0).values.flip(0),
        previous_content=torch.where(content, index, -1).cummax(0).values)


def _valid_token_spans(start_logits: torch.Tensor, end_logits: torch.Tensor, passage_mask: torch.Tensor,
                       max_answer_tokens: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(window, start, end, score) of every valid token span, flattened; only the band end - start <
    max_answer_tokens is built, so the cost is windows × tokens × max_answer_tokens."""
    length = start_logits.shape[1]
    end = torch.arange(length)[:, None] + torch.arange(min(max_answer_tokens, length))[None, :]
    inside = end < length
    end = end.clamp(max=length - 1)
    valid = inside[None] & passage_mask[:, :, None] & passage_mask[:, end]
    window, start, width = torch.nonzero(valid, as_tuple=True)
    return window, start, start + width, start_logits[window, start] + end_logits[window, start + width]


def _merge(score: torch.Tensor, group: torch.Tensor, n_groups: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per group of token spans: the summed softmax probability, the best score, and the first entry
    holding that score."""
    probability = torch.zeros(n_groups, dtype=torch.float64).index_add_(
        0, group, (score - torch.logsumexp(score, dim=0)).double().exp())
    best_score = torch.full((n_groups,), float("-inf")).scatter_reduce(0, group, score, "amax")
    is_best = score == best_score[group]
    best_entry = torch.full((n_groups,), len(score)).scatter_reduce(
        0, group[is_best], torch.arange(len(score))[is_best], "amin")
    return probability, best_score, best_entry


def _ranked(probability: torch.Tensor, best_score: torch.Tensor, n_best: int) -> list[int]:
    """The n_best most probable groups; equal probabilities go to the better single span."""
    threshold = torch.topk(probability, min(n_best, len(probability))).values[-1]
    candidates = torch.nonzero(probability >= threshold).flatten()  # ties at the threshold included
    order = candidates[torch.argsort(best_score[candidates], descending=True, stable=True)]
    return order[torch.argsort(probability[order], descending=True, stable=True)][:n_best].tolist()


def _whole_word_span(first: WrittenWord, last: WrittenWord, best: tuple[int, int, int], probability: float,
                     windows: Windows, passage_tokens: list[list[int]], passage: str,
                     start_logits: torch.Tensor, end_logits: torch.Tensor) -> Span:
    start_char, end_char = first.start_char, last.end_char
    window, start, end = next(
        ((w, *span) for w in (best[0], *range(len(windows.offsets)))
         if (span := token_span(windows.offsets[w], passage_tokens[w], start_char, end_char))), best)
    return Span(text=passage[start_char:end_char], start_char=start_char, end_char=end_char,
                start_token=start, end_token=end, window=window,
                start_logit=float(start_logits[window, start]), end_logit=float(end_logits[window, end]),
                probability=probability)


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
