"""SQuAD and DuoRC loaders, and clear errors for malformed files."""
import json

import pytest

from rcqa.data import DataError, load_examples, nesting
from tests.helpers.squad_files import SQUAD, duorc, squad_with

def write(tmp_path, content, name="data.json"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


def test_squad_v1(tmp_path):
    (example,) = load_examples(write(tmp_path, SQUAD))
    assert (example.id, example.title, example.question) == ("q1", "Bridges", "When did it open?")
    assert example.answers[0].text == "1935" and example.answers[0].start_char == 21
    assert not example.is_impossible


def test_squad_v2_unanswerable_question(tmp_path):
    document = json.loads(json.dumps(SQUAD))
    document["data"][0]["paragraphs"][0]["qas"].append(
        {"id": "q2", "question": "Who built it?", "answers": [], "is_impossible": True})
    examples = load_examples(write(tmp_path, document))
    assert examples[1].is_impossible and examples[1].answers == ()


def test_duorc_answers_are_located_in_the_plot(tmp_path):
    movies = [{"id": "m1", "title": "Film", "plot": "Anna meets Tom in Paris.", "qa": [
        {"id": "x", "question": "Where do they meet?", "answers": ["paris"], "no_answer": False},
        {"id": "y", "question": "Who is the villain?", "answers": [], "no_answer": True}]}]
    found, missing = load_examples(write(tmp_path, movies))
    assert found.answers[0].start_char == 18 and found.passage[18:23] == "Paris"
    assert missing.is_impossible


def test_raw_bytes_from_an_upload():
    assert len(load_examples(json.dumps(SQUAD).encode())) == 1


@pytest.mark.parametrize("content, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
    (b"{not json", "not valid JSON"),
    ({"version": "1.1"}, "not a SQuAD file"),
    ({"data": "nope"}, "must be a list"),
    ({"data": [{"paragraphs": [{"qas": []}]}]}, "'context' must be a non-empty string"),
    ({"data": [{"paragraphs": [{"context": "abc", "qas": [{"question": "q", "answers": [
        {"text": "abc", "answer_start": 99}]}]}]}]}, "offset inside the context"),
    ([{"plot": "p", "qa": [{"question": "q", "answers": [3]}]}], "list of strings"),
])
def test_malformed_files_give_a_clear_error_saying_where(tmp_path, content, message):
    with pytest.raises(DataError, match=message):
        load_examples(write(tmp_path, content))


def test_a_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_examples(tmp_path / "absent.json")


@pytest.mark.parametrize("raw, message", [
    (b"[" * 1000 + b"]" * 1000, "nested too deeply"),  # 2 KB: Python's JSON parser recursed past its limit
    (squad_with([{"text": "1935", "answer_start": 21}] * 33), "33 answers; the limit is 32"),
    (duorc("The bridge opened. " * 6000, ["bridge"]), "the plot has 114,000 characters; the limit is 100,000"),
    # 125 questions × 32 answers, each searched for in a 100,000-character plot: 4 × 10⁸ characters
    (duorc("b" * 99_999 + ".", ["zz"] * 32, questions=126), "too many answers to locate"),
])
def test_uploads_are_bounded_with_one_clear_sentence(raw, message):
    with pytest.raises(DataError, match=message):
        load_examples(raw)


def test_a_file_with_too_many_questions(monkeypatch):
    monkeypatch.setattr("rcqa.data.MAX_EXAMPLES", 3)
    assert len(load_examples(squad_with([], questions=3))) == 3
    with pytest.raises(DataError, match="more than 3 questions"):
        load_examples(squad_with([], questions=4))
    with pytest.raises(DataError, match="more than 3 questions"):
        load_examples(duorc("The bridge opened.", ["bridge"], questions=4))


def test_a_plot_the_loader_takes_is_one_the_model_can_be_asked_about():
    from rcqa.data import MAX_PLOT_CHARS
    from rcqa.qa import MAX_PASSAGE_CHARS

    assert MAX_PLOT_CHARS == MAX_PASSAGE_CHARS


def test_nesting_counts_brackets_outside_strings_by_hand():
    assert nesting(b"1") == 0 and nesting(b"[]") == 1 and nesting(b"[[], [[]]]") == 3
    assert nesting(b'{"a": [1, {"b": "[[[[ {{"}]}') == 3  # brackets inside a string do not nest
    assert nesting(b'["a \\" [[[", []]') == 2  # nor after an escaped quote
    assert nesting(b"[" * 1000 + b"]" * 1000) == 1000


def test_a_deep_file_is_refused_whatever_the_recursion_limit():
    # a library may raise the interpreter's limit (mkdocstrings and torch._dynamo do), which JSON's parser relied on
    import sys

    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(20_000)
        with pytest.raises(DataError, match="nested too deeply"):
            load_examples(b"[" * 5_000 + b"]" * 5_000)
    finally:
        sys.setrecursionlimit(limit)
