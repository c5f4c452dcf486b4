"""Answer a question about a passage: doc-stride windows, the model's logits, whole-word answers (rcqa.spans)."""
from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from rcqa.model import QAModel
from rcqa.spans import MAX_ANSWER_TOKENS, N_BEST, Windows, decode, decode_with_null, token_span
from rcqa.text import written_words
from rcqa.types import Answer, AnswerSettings

MAX_PASSAGE_WORDS = 10_000
MAX_QUESTION_WORDS = 200
# a "word" is whitespace-delimited, so "a," × 50,000 is one word: characters and windows bound the work as well
MAX_PASSAGE_CHARS = 100_000
MAX_QUESTION_CHARS = 2_000
UNREAD_SHARE = 0.5  # past this share of unread tokens, a text is mostly unknown to the model: its answer is a guess
MAX_WINDOWS = 128  # after tokenising; 10,000 words of English need about 60 windows of 384 tokens
WINDOW_BATCH = 16  # windows per forward pass
RunWindows = Callable[[QAModel, Windows], tuple[torch.Tensor, torch.Tensor]]  # every window's start and end logits
Progress = Callable[[float, str], None]  # (share of the work done, where it is): a stopped job ends in it


class InputError(ValueError):
    """A passage or question the model cannot be asked about; the message says what to change."""


def validate_size(passage: str, question: str) -> None:
    """Refuse an empty or oversize passage or question, with a message a user can act on. The length is checked
    first, before anything reads the text character by character: a 10 MB paste costs nothing here."""
    for label, text, limit, char_limit in (("passage", passage, MAX_PASSAGE_WORDS, MAX_PASSAGE_CHARS),
                                           ("question", question, MAX_QUESTION_WORDS, MAX_QUESTION_CHARS)):
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"the {label} is empty")
        if len(text) > char_limit:
            raise InputError(f"the {label} has {len(text):,} characters; the limit is {char_limit:,}. "
                             f"Paste the part that holds the answer.")
        words = len(text.split())
        if words > limit:
            raise InputError(f"the {label} has {words:,} words; the limit is {limit:,}. "
                             f"Paste the part that holds the answer.")


def validate(passage: str, question: str) -> None:
    """Refuse input that has no answer to give, with a message a user can act on: its size (validate_size), then
    what reading it finds."""
    validate_size(passage, question)
    for label, text in (("passage", passage), ("question", question)):
        if _looks_binary(text):
            raise InputError(f"the {label} looks like binary data, not text")
    if all(word.is_punctuation for word in written_words(passage)):
        raise InputError("the passage has no words, only punctuation or markup")


def unread_tokens(tokenizer, text: str) -> tuple[int, int]:
    """(tokens the tokenizer could not read, tokens in all) of text. Unread: the unknown token ([UNK]), or a piece
    of one character or less of a word split into several pieces: a word spelt out letter by letter (WordPiece
    with a script it barely knows), or byte by byte (a byte-level BPE, which has no unknown token)."""
    return _unread(tokenizer, _word_pieces(tokenizer, text))


def unfamiliar_words(tokenizer, text: str) -> tuple[int, int]:
    """(words the vocabulary does not hold whole, words in all) of text, counting the words with a letter in them:
    a word read as several pieces or as [UNK]. A language the vocabulary was not built for is read in known pieces
    ("leuchtturm": le ##uch ##tt ##ur ##m), so few of its tokens are unread, yet most of its words are unfamiliar;
    SQuAD v1.1 dev's English passages have at most 28 % of such words on the default model (a median of 5 %)."""
    return _unfamiliar(tokenizer, text, _word_pieces(tokenizer, text))


Pieces = dict[int | None, list[tuple[int, int, int]]]  # word → its tokens' (id, start char, end char), in order


def _word_pieces(tokenizer, text: str) -> Pieces:
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)  # no length warning
    pieces: Pieces = {}
    for token, word, (start, end) in zip(encoding["input_ids"], encoding.word_ids(), encoding["offset_mapping"]):
        pieces.setdefault(word, []).append((token, start, end))
    return pieces


def _unread(tokenizer, pieces: Pieces) -> tuple[int, int]:
    unread = sum(1 for word in pieces.values() for token, start, end in word
                 if token == tokenizer.unk_token_id or (len(word) > 1 and end - start <= 1))
    return unread, sum(len(word) for word in pieces.values())


def _unfamiliar(tokenizer, text: str, pieces: Pieces) -> tuple[int, int]:
    lettered = [word for key, word in pieces.items()
                if key is not None and any(ch.isalpha() for ch in text[word[0][1]:word[-1][2]])]
    unfamiliar = sum(1 for word in lettered if len(word) > 1 or word[0][0] == tokenizer.unk_token_id)
    return unfamiliar, len(lettered)


def _most(counts: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    return {label: (n, total) for label, (n, total) in counts.items() if n > UNREAD_SHARE * total}


def unread_warning(tokenizer, passage: str, question: str) -> str | None:
    """One sentence where most of the question's or the passage's tokens are unread (unread_tokens), as a question
    in Chinese is to an English WordPiece model, or else where most of their words are unfamiliar
    (unfamiliar_words), as German is to it; None where the model can read both."""
    texts = {"question": question, "passage": passage}
    pieces = {label: _word_pieces(tokenizer, text) for label, text in texts.items()}  # each text tokenised once
    unread = _most({label: _unread(tokenizer, found) for label, found in pieces.items()})
    if unread:
        return (f"Most of the {_whose(unread)} tokens are unknown to the model's tokenizer ({_shares(unread)}: [UNK], or "
                f"a word spelt out letter by letter), so the model can hardly read {_them(unread)} and its answer is "
                "likely a guess.")
    unfamiliar = _most({label: _unfamiliar(tokenizer, texts[label], found) for label, found in pieces.items()})
    if unfamiliar:
        return (f"Most of the {_whose(unfamiliar)} words are not in the model's vocabulary ({_shares(unfamiliar)} "
                f"read in pieces), as with a language it was not trained on, so it may misread {_them(unfamiliar)} "
                "and its answer may be a guess.")
    return None


def _whose(counts: dict[str, tuple[int, int]]) -> str:
    return " and the ".join(f"{label}'s" for label in counts)


def _shares(counts: dict[str, tuple[int, int]]) -> str:
    return " and ".join(f"{n:,} of {total:,}" for n, total in counts.values())


def _them(counts: dict[str, tuple[int, int]]) -> str:
    return "them" if len(counts) > 1 else "it"


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
        padding="longest", padding_side="right", return_tensors="pt",  # windows are cut at their length
    )
    if len(encoded["input_ids"]) > MAX_WINDOWS:
        raise InputError(f"the passage needs {len(encoded['input_ids']):,} windows of {qa_model.max_len} tokens; "
                         f"the limit is {MAX_WINDOWS}. Paste the part that holds the answer.")
    names = {1 - int(pad_right): "question", int(pad_right): "passage", None: "special"}
    segments = [[names[s] for s in encoded.sequence_ids(w)] for w in range(len(encoded["input_ids"]))]
    passage_mask = torch.tensor([[s == "passage" for s in window] for window in segments])
    if not passage_mask.any():
        raise InputError("the passage has no tokens the model can read")
    inputs = {k: encoded[k] for k in tokenizer.model_input_names if k in encoded}
    offsets = [[tuple(pair) for pair in window.tolist()] for window in encoded["offset_mapping"]]
    return Windows(inputs=inputs, offsets=offsets, passage_mask=passage_mask, segments=segments,
                   word_ids=[encoded.word_ids(w) for w in range(len(segments))], question=question)


def char_span_to_tokens(windows: Windows, start_char: int, end_char: int,
                        prefer: int | None = None) -> tuple[int, int, int] | None:
    """(window, start token, end token) of the first window whose passage holds the whole character span; the
    window `prefer` first, where one is given."""
    for window in range(len(windows.offsets)) if prefer is None else (prefer, *range(len(windows.offsets))):
        offsets = windows.offsets[window]
        passage = [t for t, inside in enumerate(windows.passage_mask[window].tolist()) if inside]
        span = token_span(offsets, passage, start_char, end_char)
        if span:
            return window, *span
    return None


def truncate_question(tokenizer, question: str, max_query_len: int) -> str:
    tokens = tokenizer.tokenize(question)
    if len(tokens) <= max_query_len:
        return question
    return tokenizer.convert_tokens_to_string(tokens[:max_query_len])


@torch.inference_mode()
def logits(qa_model: QAModel, windows: Windows, batch_size: int = WINDOW_BATCH,
           progress: Progress | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Start and end logits for every window (windows × tokens), computed in batches; `progress` is told after
    each batch (a long paste is 100 windows or more: a server stops its reading there)."""
    starts, ends = [], []
    for begin in range(0, len(windows), batch_size):
        batch = {k: v[begin:begin + batch_size].to(qa_model.device) for k, v in windows.inputs.items()}
        output = qa_model.model(**batch)
        starts.append(output.start_logits.float().cpu())
        ends.append(output.end_logits.float().cpu())
        if progress is not None:
            read = min(begin + batch_size, len(windows))
            progress(read / len(windows), f"window {read}/{len(windows)} read")
    return torch.cat(starts), torch.cat(ends)


def answer(qa_model: QAModel, passage: str, question: str, n_best: int = N_BEST,
           max_answer_tokens: int = MAX_ANSWER_TOKENS, allow_null: bool | None = None) -> Answer:
    """The model's n-best answers to question about passage (InputError for unusable input)."""
    return answer_with_windows(qa_model, passage, question, n_best, max_answer_tokens, allow_null)[0]


def best_span_and_null_odds(qa_model: QAModel, passage: str, question: str) -> tuple[str, float]:
    """The best span's text and its null odds (null score − best span score), whatever the threshold: what the
    official v2.0 metrics read (rcqa.evaluate.evaluate_v2), and the answer with "no answer" ruled out."""
    found = answer(qa_model, passage, question, n_best=1, allow_null=True)
    return (found.best.text if found.best else ""), found.null_odds


def answer_with_windows(qa_model: QAModel, passage: str, question: str, n_best: int = N_BEST,
                        max_answer_tokens: int = MAX_ANSWER_TOKENS,
                        allow_null: bool | None = None) -> tuple[Answer, Windows]:
    """The answer and the windows it was read from (what attribution needs to see the same input)."""
    return answer_with_logits(qa_model, passage, question, n_best, max_answer_tokens, allow_null)[:2]


def answer_with_logits(qa_model: QAModel, passage: str, question: str, n_best: int = N_BEST,
                       max_answer_tokens: int = MAX_ANSWER_TOKENS, allow_null: bool | None = None,
                       run: RunWindows | None = None) -> tuple[Answer, Windows, tuple[torch.Tensor, torch.Tensor]]:
    """The answer, the windows it was read from, and every window's start and end logits (windows × tokens, on
    the CPU) that it was decoded from: a contrast scores its foil on them rather than running the windows again.

    allow_null lets the model answer "no answer" (rcqa.spans.decode_with_null, at the card's threshold); None
    allows it for a model whose card says it was trained with unanswerable questions. `run` gives the windows'
    logits instead of the model's forward (logits): an explanation whose own pass computes them."""
    validate(passage, question)
    windows = encode(qa_model, question, passage)
    start_logits, end_logits = (run or logits)(qa_model, windows)
    allow_null = null_allowed(qa_model, allow_null)
    no_answer = None
    if allow_null:
        if qa_model.null_refusal:
            raise InputError(qa_model.null_refusal)
        spans, no_answer = decode_with_null(start_logits, end_logits, windows, passage, qa_model.null_threshold,
                                            n_best, max_answer_tokens)
    else:
        spans = decode(start_logits, end_logits, windows, passage, n_best, max_answer_tokens)
    return Answer(question=question, nbest=tuple(spans), n_windows=len(windows),
                  settings=answer_settings(qa_model, allow_null, n_best, max_answer_tokens),
                  no_answer=no_answer), windows, (start_logits, end_logits)


def null_allowed(qa_model: QAModel, allow_null: bool | None) -> bool:
    """Whether "no answer" is decoded: as asked, else (None) as the model's card says."""
    return qa_model.trained_with_unanswerable if allow_null is None else allow_null


def answer_settings(qa_model: QAModel, allow_null: bool, n_best: int = N_BEST,
                    max_answer_tokens: int = MAX_ANSWER_TOKENS) -> AnswerSettings:
    """How answer_with_logits decodes with this model."""
    return AnswerSettings(qa_model.name, qa_model.max_len, qa_model.doc_stride, max_answer_tokens, n_best,
                          allow_null)


@dataclass(frozen=True)
class Reading:
    """The answer (answer's, at its defaults) and every window's start and end logits (windows × tokens) it was
    decoded from, held as arrays so that it pickles as plain data: what a page that answered the example hands the
    worker process explaining it, which then does not run the windows again (rcqa.attribution.window checks that
    the reading fits)."""

    answer: Answer
    start_logits: np.ndarray
    end_logits: np.ndarray
    text: str  # text_digest of the question and passage read
    fingerprint: str  # the model that read them

    @property
    def logits(self) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.from_numpy(self.start_logits), torch.from_numpy(self.end_logits)


def read(qa_model: QAModel, passage: str, question: str, progress: Progress | None = None) -> Reading:
    """The model's answer to question about passage (as answer gives it), with the logits it was decoded from;
    `progress` is told as the windows are read (logits)."""
    run = None if progress is None else functools.partial(logits, progress=progress)
    found, _, (start_logits, end_logits) = answer_with_logits(qa_model, passage, question, run=run)
    return Reading(found, start_logits.numpy(), end_logits.numpy(), text_digest(passage, question),
                   qa_model.fingerprint)


def text_digest(passage: str, question: str) -> str:
    """What names a question about a passage, whatever their length: a 100,000-character passage hashes in a
    fraction of a millisecond."""
    return hashlib.sha256(f"{question}\0{passage}".encode()).hexdigest()
