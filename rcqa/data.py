"""Load SQuAD v1.1 / v2.0 and DuoRC files into Examples, with clear errors for malformed input."""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from rcqa.types import Example, GoldAnswer

MAX_PLOT_CHARS = 100_000  # rcqa.qa's passage limit (a layer above this one): a longer plot could not be asked about
MAX_EXAMPLES = 200_000  # SQuAD 2.0 train has 130,319 questions
MAX_NESTING = 64  # SQuAD v1.1 dev nests 9 levels deep
MAX_ANSWERS = 32  # per question; SQuAD dev gives up to 6, DuoRC a handful
# DuoRC answers are located by search: plot characters scanned per file, about 5 s on a crafted file (a periodic
# answer in a periodic plot) and far less on real plots; DuoRC SelfRC's dev file scans about 10⁸
MAX_SEARCHED_CHARS = 400_000_000


class DataError(ValueError):
    """A dataset file that cannot be read as SQuAD or DuoRC; the message says where and why."""


def load_examples(source: str | Path | bytes) -> list[Example]:
    """Read a SQuAD or DuoRC file (path or raw bytes), detecting the format from its structure."""
    document = _parse_json(source)
    if isinstance(document, dict) and "data" in document:
        return parse_squad(document)
    if isinstance(document, list):
        return parse_duorc(document)
    raise DataError(
        "not a SQuAD file (a JSON object with a 'data' list) nor a DuoRC file (a JSON list of "
        "movies with 'plot' and 'qa')"
    )


def _parse_json(source: str | Path | bytes) -> Any:
    if isinstance(source, bytes):
        raw, name = source, "upload"
    else:
        path = Path(source)
        if not path.is_file():
            raise DataError(f"{path}: no such file")
        raw, name = path.read_bytes(), str(path)
    if nesting(raw) > MAX_NESTING:
        raise DataError(f"{name}: nested too deeply to be a SQuAD or DuoRC file")
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise DataError(f"{name}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise DataError(f"{name}: not valid JSON ({error.msg}, line {error.lineno})") from None


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


def nesting(raw: bytes) -> int:
    """How deep the JSON text's arrays and objects nest, brackets inside strings left out; counted before parsing,
    since the parser's own guard is the interpreter's recursion limit, which a library may have raised (mkdocstrings
    and torch._dynamo do), and past which a deep file would overflow the C stack."""
    bare = np.frombuffer(_JSON_STRING.sub(b'""', raw), dtype=np.uint8)
    steps = np.isin(bare, np.frombuffer(b"[{", np.uint8)).astype(np.int64) - np.isin(bare, np.frombuffer(b"]}", np.uint8))
    return int(steps.cumsum().max(initial=0))


def _require(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise DataError(f"{where}: {message}")


def _count_example(examples: list, where: str) -> None:
    _require(len(examples) < MAX_EXAMPLES, where, f"the file has more than {MAX_EXAMPLES:,} questions; split it")


def _answers(qa: dict, where: str) -> list:
    answers = qa.get("answers", [])
    _require(isinstance(answers, list), where, "'answers' must be a list")
    _require(len(answers) <= MAX_ANSWERS, where, f"{len(answers):,} answers; the limit is {MAX_ANSWERS}")
    return answers


def _text_field(record: dict, key: str, where: str) -> str:
    value = record.get(key)
    _require(isinstance(value, str) and value.strip() != "", where, f"'{key}' must be a non-empty string")
    assert isinstance(value, str)  # _require refused anything else
    return value


def parse_squad(document: dict) -> list[Example]:
    """SQuAD v1.1 or v2.0: articles → paragraphs → questions, answers with character offsets."""
    articles = document.get("data")
    _require(isinstance(articles, list), "data", "must be a list of articles")
    assert isinstance(articles, list)  # _require refused anything else
    examples: list[Example] = []
    for a, article in enumerate(articles):
        where = f"data[{a}]"
        _require(isinstance(article, dict), where, "an article must be an object")
        paragraphs = article.get("paragraphs")
        _require(isinstance(paragraphs, list), where, "'paragraphs' must be a list")
        for p, paragraph in enumerate(paragraphs):
            p_where = f"{where}.paragraphs[{p}]"
            _require(isinstance(paragraph, dict), p_where, "a paragraph must be an object")
            context = _text_field(paragraph, "context", p_where)
            qas = paragraph.get("qas")
            _require(isinstance(qas, list), p_where, "'qas' must be a list")
            for q, qa in enumerate(qas):
                _count_example(examples, f"{p_where}.qas[{q}]")
                examples.append(_squad_question(qa, context, str(article.get("title", "")), f"{p_where}.qas[{q}]"))
    return examples


def _squad_question(qa: Any, context: str, title: str, where: str) -> Example:
    _require(isinstance(qa, dict), where, "a question must be an object")
    gold = []
    for n, answer in enumerate(_answers(qa, where)):
        a_where = f"{where}.answers[{n}]"
        _require(isinstance(answer, dict), a_where, "an answer must be an object")
        text = answer.get("text")
        start = answer.get("answer_start")
        _require(isinstance(text, str), a_where, "'text' must be a string")
        _require(isinstance(start, int) and 0 <= start <= len(context) - len(text), a_where,
                 "'answer_start' must be an offset inside the context")
        gold.append(GoldAnswer(text=text, start_char=start))
    return Example(
        id=str(qa.get("id", where)),
        passage=context,
        question=_text_field(qa, "question", where),
        title=title,
        answers=tuple(gold),
        is_impossible=bool(qa.get("is_impossible", False)),
    )


def parse_duorc(movies: list) -> list[Example]:
    """DuoRC SelfRC / ParaphraseRC: movies with a plot and free-text answers (offsets found by search)."""
    examples: list[Example] = []
    searched = 0
    for m, movie in enumerate(movies):
        where = f"[{m}]"
        _require(isinstance(movie, dict), where, "a movie must be an object")
        plot = _text_field(movie, "plot", where)
        _require(len(plot) <= MAX_PLOT_CHARS, where,
                 f"the plot has {len(plot):,} characters; the limit is {MAX_PLOT_CHARS:,}")
        qas = movie.get("qa")
        _require(isinstance(qas, list), where, "'qa' must be a list")
        for q, qa in enumerate(qas):
            q_where = f"{where}.qa[{q}]"
            _require(isinstance(qa, dict), q_where, "a question must be an object")
            _count_example(examples, q_where)
            texts = _answers(qa, q_where)
            _require(all(isinstance(t, str) for t in texts), q_where, "'answers' must be a list of strings")
            searched += len(plot) * len(texts)
            _require(searched <= MAX_SEARCHED_CHARS, q_where,
                     "too many answers to locate in the plots of one file; split the file")
            examples.append(Example(
                id=str(qa.get("id", f"{movie.get('id', m)}-{q}")),
                passage=plot,
                question=_text_field(qa, "question", q_where),
                title=str(movie.get("title", "")),
                answers=tuple(_locate(plot, texts)),
                is_impossible=bool(qa.get("no_answer", False)) or not texts,
            ))
    return examples


def _locate(passage: str, texts: Iterable[str]) -> list[GoldAnswer]:
    """DuoRC gives answer strings only; the offset is their first case-insensitive match, or -1. An answer longer
    than the plot cannot be in it, and is not searched for."""
    lowered = passage.lower()
    return [GoldAnswer(text=t, start_char=lowered.find(t.lower()) if len(t) <= len(passage) else -1)
            for t in texts if t.strip()]
