"""SQuAD and DuoRC files written by the tests: from examples, from (passage, question, answer) triples, and one
small SQuAD v1.1 file to vary."""
import json

from rcqa.types import Example

def squad_json(examples: list[Example]) -> dict:
    paragraphs = [{"context": e.passage, "qas": [
        {"id": e.id, "question": e.question, "is_impossible": e.is_impossible,
         "answers": [{"text": a.text, "answer_start": a.start_char} for a in e.answers]}]} for e in examples]
    return {"version": "v2.0", "data": [{"title": "gallery", "paragraphs": paragraphs}]}


def squad_upload(*questions: tuple[str, str, str]) -> bytes:
    """A SQuAD v1.1 file with one paragraph per (passage, question, answer)."""
    paragraphs = [{"context": passage, "qas": [{"id": f"q{i}", "question": question,
                                                 "answers": [{"text": answer, "answer_start": passage.index(answer)}]}]}
                  for i, (passage, question, answer) in enumerate(questions)]
    return json.dumps({"version": "1.1", "data": [{"title": "Uploaded", "paragraphs": paragraphs}]}).encode()


SQUAD = {"version": "1.1", "data": [{"title": "Bridges", "paragraphs": [{
    "context": "The bridge opened in 1935.",
    "qas": [{"id": "q1", "question": "When did it open?", "answers": [{"text": "1935", "answer_start": 21}]}],
}]}]}


def duorc(plot: str, answers: list, questions: int = 1) -> bytes:
    return json.dumps([{"plot": plot, "qa": [{"question": "Who?", "answers": answers}] * questions}]).encode()


def squad_with(answers: list, questions: int = 1) -> bytes:
    document = json.loads(json.dumps(SQUAD))
    document["data"][0]["paragraphs"][0]["qas"] = [
        {"id": f"q{n}", "question": "When?", "answers": answers} for n in range(questions)]
    return json.dumps(document).encode()
