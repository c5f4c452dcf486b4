"""Attributions built by hand, word by word, so that every analysis can be checked against numbers worked out
on paper. Each word becomes one token per piece; a word's score is spread over its pieces as given."""
from __future__ import annotations

import numpy as np

from rcqa.types import AGGREGATIONS, Answer, Attribution, Example, ExplainedTarget, ExplainSettings, Span, Windowing, Word

# (text, Penn Treebank tag, scores per layer): a word of several pieces gives a list of per-piece scores
HandWord = tuple[str, str, list]


def handmade(question: list[tuple[str, str]], passage: list[HandWord], explained: tuple[int, int],
             predicted: tuple[int, int] | None = None, question_text: str | None = None,
             passage_text: str | None = None) -> Attribution:
    """A one-target result. explained / predicted: (first, last) passage word index (punctuation included) of
    the span the target explains and of the model's answer (default: the same span). The texts default to the
    words joined by spaces; a given text must hold the words in order."""
    passage_text = passage_text or " ".join(text for text, _, _ in passage)
    question_text = question_text or " ".join(text for text, _ in question)
    layers = len(passage[0][2])
    tokens, offsets, segments, words = ["[CLS]"], [(0, 0)], ["special"], []
    columns = [np.zeros(layers)]

    def add_word(text: str, tag: str, start: int, segment: str, piece_scores: np.ndarray) -> None:
        pieces = piece_scores.shape[1]
        bounds = np.linspace(start, start + len(text), pieces + 1).round().astype(int)
        indices = tuple(range(len(tokens), len(tokens) + pieces))
        for piece in range(pieces):
            tokens.append(text[bounds[piece] - start:bounds[piece + 1] - start])
            offsets.append((int(bounds[piece]), int(bounds[piece + 1])))
            segments.append(segment)
            columns.append(piece_scores[:, piece])
        words.append(Word(text, start, start + len(text), segment, indices, tag))

    cursor = 0
    for text, tag in question:
        cursor = question_text.index(text, cursor)
        add_word(text, tag, cursor, "question", np.zeros((layers, 1)))
        cursor += len(text)
    tokens.append("[SEP]"), offsets.append((0, 0)), segments.append("special"), columns.append(np.zeros(layers))
    starts = []
    cursor = 0
    for text, tag, scores in passage:
        cursor = passage_text.index(text, cursor)
        starts.append(cursor)
        piece_scores = np.asarray(scores, dtype=float).reshape(layers, -1)
        add_word(text, tag, cursor, "passage", piece_scores)
        cursor += len(text)
    tokens.append("[SEP]"), offsets.append((0, 0)), segments.append("special"), columns.append(np.zeros(layers))

    def span(first: int, last: int) -> tuple[int, int, int, int]:
        first_word, last_word = words[len(question) + first], words[len(question) + last]
        return first_word.start_char, last_word.end_char, first_word.tokens[0], last_word.tokens[-1]

    start_char, end_char, start_token, end_token = span(*explained)
    p_start, p_end, p_first, p_last = span(*(predicted or explained))
    answer = Answer(question=question_text, n_windows=1, nbest=(
        Span(passage_text[p_start:p_end], p_start, p_end, p_first, p_last, 0, 1.0, 1.0, 0.9),))
    scores = np.stack(columns, axis=1)  # layers × tokens
    return Attribution(
        example=Example(id="handmade", passage=passage_text, question=question_text), model="handmade",
        fingerprint="0", answer=answer, window=0, tokens=tokens, token_offsets=offsets, token_segments=segments,
        words=words, layers=["embeddings"] + [f"block {i}" for i in range(layers - 1)],
        targets=[ExplainedTarget("span_log_prob", "", start_token, end_token, passage_text[start_char:end_char], 0)],
        scores=np.repeat(scores[None, None], len(AGGREGATIONS), axis=1).astype(np.float32),
        completeness=[], settings=ExplainSettings(), windowing=Windowing(max_len=384, doc_stride=128))
