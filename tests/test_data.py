"""SQuAD and DuoRC loaders, and clear errors for malformed files."""
import json

import pytest

from rcqa.data import DataError, load_examples

SQUAD = {"version": "1.1", "data": [{"title": "Bridges", "paragraphs": [{
    "context": "The bridge opened in 1935.",
    "qas": [{"id": "q1", "question": "When did it open?", "answers": [{"text": "1935", "answer_start": 21}]}],
}]}]}


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
