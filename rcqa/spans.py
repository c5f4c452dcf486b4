"""The windows a passage is read in, and whole-word answer spans: exact n-best decoding of start and end logits over every window, spans aligned to
the passage's written words, identical answers merged."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from rcqa.memo import memoize_by_size
from rcqa.text import MAX_CACHED_BYTES, WrittenWord, held_bytes, word_at, written_words
from rcqa.types import NoAnswer, Span

MAX_ANSWER_TOKENS = 30
N_BEST = 20
NULL_TOKEN = 0  # where a SQuAD 2.0 model puts "no answer": [CLS] (<s> for RoBERTa), first in every window


@dataclass(frozen=True)
class Windows:
    """The question + passage encoded as overlapping windows, as the model sees them."""

    inputs: dict[str, torch.Tensor]  # input_ids, attention_mask (+ token_type_ids): windows × tokens
    offsets: list[list[tuple[int, int]]]  # per window and token: character span in its own text
    passage_mask: torch.Tensor  # windows × tokens, True where the token belongs to the passage
    segments: Sequence[list[str]] = ()  # per window and token: "question", "passage" or "special"
    word_ids: Sequence[list[int | None]] = ()  # per window and token: word index within its own text
    question: str = ""  # the question as encoded (after truncation to max_query_len tokens)

    def __len__(self) -> int:
        return self.inputs["input_ids"].shape[0]


def decode(start_logits: torch.Tensor, end_logits: torch.Tensor, windows: Windows, passage: str,
           n_best: int = N_BEST, max_answer_tokens: int = MAX_ANSWER_TOKENS) -> list[Span]:
    """The n most probable whole-word answers over all windows, exactly, with no "no answer" to choose.

    A valid token span (start ≤ end, at most max_answer_tokens long, both ends in the passage) answers
    with whole written words: from the word holding its start token to the word holding its end token,
    less the punctuation and markup words at either end (so an answer may take a few more tokens than
    max_answer_tokens, to complete its first and last words). A span of punctuation only answers nothing and
    is left out; every other one has the softmax probability of start+end over all of them, in every
    window, and adds it to the probability of the characters it answers with, so that the answers'
    probabilities sum to 1.

    Each Span's window is that of the answer's best-scoring token span, and its tokens are the first and
    last tokens of that window covering the answer's characters, so that explaining the span explains the
    whole-word answer. When a word is cut by that window's edge, the first window holding the whole answer
    is taken; if none does, the best token span itself (the text is still the whole-word answer).
    """
    return _decode(start_logits, end_logits, windows, passage, n_best, max_answer_tokens, None)[0]


def decode_with_null(start_logits: torch.Tensor, end_logits: torch.Tensor, windows: Windows, passage: str,
                     threshold: float = 0.0, n_best: int = N_BEST,
                     max_answer_tokens: int = MAX_ANSWER_TOKENS) -> tuple[list[Span], NoAnswer]:
    """decode's answers beside "no answer", by the official SQuAD 2.0 rule of BERT's run_squad.

    The null score is start[CLS] + end[CLS] of the window where it is smallest (run_squad's min over windows).
    The model abstains when null score − the best valid token span's score > threshold (a tie answers). "No
    answer" is one more entry of decode's softmax, so the answers' probabilities and the null's sum to 1.
    """
    spans, no_answer = _decode(start_logits, end_logits, windows, passage, n_best, max_answer_tokens, threshold)
    assert no_answer is not None  # decoded with a threshold, so "no answer" is scored
    return spans, no_answer


def null_scores(start_logits: torch.Tensor, end_logits: torch.Tensor) -> torch.Tensor:
    """Per window: the score of "no answer", start + end logit at [CLS]."""
    return start_logits[:, NULL_TOKEN] + end_logits[:, NULL_TOKEN]


def _decode(start_logits: torch.Tensor, end_logits: torch.Tensor, windows: Windows, passage: str, n_best: int,
            max_answer_tokens: int, threshold: float | None) -> tuple[list[Span], NoAnswer | None]:
    words = _passage_words(passage)
    window, start, end, score, key = _answering_spans(start_logits, end_logits, windows, words, max_answer_tokens)
    extra, no_answer = None, None
    if threshold is not None:
        null = null_scores(start_logits, end_logits).min(0)
        extra = null.values[None]
        no_answer = _no_answer(null, score, extra, threshold)
    if not len(score):
        return [], no_answer
    answers, group = torch.unique(key, return_inverse=True)
    probability, best_score, best_entry = _merge(score, group, len(answers), extra)
    passage_tokens = [torch.nonzero(row).flatten().tolist() for row in windows.passage_mask]
    return [_whole_word_span(words.words[int(answers[a]) // len(words.words)],
                             words.words[int(answers[a]) % len(words.words)],
                             (int(window[e]), int(start[e]), int(end[e])), float(probability[a]),
                             windows, passage_tokens, passage, start_logits, end_logits)
            for a, e in ((a, int(best_entry[a])) for a in _ranked(probability, best_score, n_best))], no_answer


def _no_answer(null, score: torch.Tensor, extra: torch.Tensor, threshold: float) -> NoAnswer:
    """The null entry: its score, its share of the softmax over every answering span and itself, and the choice."""
    null_score = float(null.values)
    everything = torch.cat([score, extra])
    probability = float((everything - torch.logsumexp(everything, dim=0)).double().exp()[-1])
    best_span = float(score.max()) if len(score) else None
    chosen = best_span is None or null_score - best_span > threshold
    return NoAnswer(score=null_score, probability=probability, threshold=threshold, chosen=chosen,
                    window=int(null.indices), best_span_score=best_span)


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
        return word_at(self.start_char, self.end_char, offsets[..., 0].contiguous())


# per word: the WrittenWord and four int64 tensor elements
@memoize_by_size(MAX_CACHED_BYTES, lambda passage, words: held_bytes(passage, words.words) + 32 * len(words.words))
def _passage_words(passage: str) -> _PassageWords:
    words = written_words(passage) or (WrittenWord("", 0, 0, ""),)  # a blank passage: one empty non-word
    index = torch.arange(len(words))
    content = torch.tensor([not w.is_punctuation for w in words])
    return _PassageWords(
        words=words, start_char=torch.tensor([w.start_char for w in words]),
        end_char=torch.tensor([w.end_char for w in words]),
        next_content=torch.where(content, index, len(words)).flip(0).cummin(0).values.flip(0),
        previous_content=torch.where(content, index, -1).cummax(0).values)


def answer_standing(start_logits: torch.Tensor, end_logits: torch.Tensor, windows: Windows, passage: str,
                    span: tuple[int, int, int], max_answer_tokens: int = MAX_ANSWER_TOKENS) -> tuple[int | None, float]:
    """(rank, probability) among the answers decode weighs of the whole-word answer that the passage token span
    (window, start token, end token) gives: rank 1 is the most probable, and an answer's rank is 1 + the number of
    answers strictly more probable. (None, 0.0) when no valid token span gives that answer."""
    words = _passage_words(passage)
    _, _, _, score, key = _answering_spans(start_logits, end_logits, windows, words, max_answer_tokens)
    window, start, end = span
    token_word = words.of_tokens(torch.tensor(windows.offsets[window]))
    wanted = words.next_content[token_word[start]] * len(words.words) + words.previous_content[token_word[end]]
    answers, group = torch.unique(key, return_inverse=True)
    found = torch.nonzero(answers == wanted).flatten()
    if not len(found):
        return None, 0.0
    probability = _merge(score, group, len(answers))[0]
    chosen = probability[found[0]]
    return int((probability > chosen).sum()) + 1, float(chosen)


def _answering_spans(start_logits: torch.Tensor, end_logits: torch.Tensor, windows: Windows, words: _PassageWords,
                     max_answer_tokens: int) -> tuple[torch.Tensor, ...]:
    """(window, start, end, score, answer key) of every valid token span that answers with at least one word; the
    key of the whole-word answer it gives is first word × words + last word, punctuation at either end left out."""
    window, start, end, score = _valid_token_spans(start_logits, end_logits, windows.passage_mask,
                                                   max_answer_tokens)
    token_word = words.of_tokens(torch.tensor(windows.offsets))
    first, last = words.next_content[token_word[window, start]], words.previous_content[token_word[window, end]]
    answered = first <= last
    key = first * len(words.words) + last
    return tuple(t[answered] for t in (window, start, end, score, key))


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


def _merge(score: torch.Tensor, group: torch.Tensor, n_groups: int, extra: torch.Tensor | None = None,
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per group of token spans: the summed softmax probability (the softmax also over the extra scores, when
    given: the null's), the best score, and the first entry holding that score."""
    normaliser = torch.logsumexp(score if extra is None else torch.cat([score, extra]), dim=0)
    probability = torch.zeros(n_groups, dtype=torch.float64).index_add_(
        0, group, (score - normaliser).double().exp())
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


def token_span(offsets: list[tuple[int, int]], passage_tokens: list[int], start_char: int,
               end_char: int) -> tuple[int, int] | None:
    """The first and last passage token covering [start_char, end_char), or None if the window misses it."""
    if not passage_tokens or offsets[passage_tokens[0]][0] > start_char or offsets[passage_tokens[-1]][1] < end_char:
        return None
    start = next(t for t in passage_tokens if offsets[t][1] > start_char)
    end = next(t for t in reversed(passage_tokens) if offsets[t][0] < end_char)
    return start, end
