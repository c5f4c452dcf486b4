"""The sentence check over many questions (rcqa.faithfulness.sentences.over_questions and `sentence-check`): its
means, its differences from a random ranking and between methods are the per-question values' as worked out here,
its sentences say what those numbers allow, and a stopped run resumes without computing a question twice."""
import json

import numpy as np
import pytest

from rcqa.faithfulness.sentences import over_questions
from rcqa.faithfulness.sentences.agreement import SentenceCheck
from rcqa.faithfulness.sentences.over_questions import QuestionChecks, summarize
from rcqa.gallery import gallery_example

LABELS = {"a": "Method A", "b": "Method B"}


def check(drop: float, top1: float, rho: float, random_drop: float = 0.1, context: int = 4) -> SentenceCheck:
    """Two layers: the first's values those given, the second's all 0."""
    return SentenceCheck(context, [rho, 0.0], [top1, 0.0], [drop, 0.0], [None, None], random_drop)


def questions() -> list[QuestionChecks]:
    """12 questions: A's top sentence always drops 0.3 where a random one drops 0.1 and is always the top one; B is
    a random sentence exactly, with ρ alternating ±0.5; the twelfth question's B answered otherwise (left out)."""
    made = []
    for index in range(12):
        checks = {"a": check(0.3, 1.0, 0.6), "b": check(0.1, 0.0, 0.5 if index % 2 else -0.5)}
        if index == 11:
            del checks["b"]
        made.append(QuestionChecks(f"q{index}", 5, 0.5, ["embeddings", "block 0"], checks))
    return made


def test_the_means_and_differences_are_the_questions_values_worked_out_by_hand():
    found = summarize(questions(), ["a", "b"], LABELS)
    first = {measure: {name: found["means"][measure][name][0] for name in "ab"} for measure in found["means"]}
    assert first["top_sentence_drop"]["a"]["mean"] == pytest.approx(0.3) and first["top_sentence_drop"]["a"]["n"] == 12
    assert first["top_sentence_drop"]["b"]["n"] == 11  # the question B left out
    assert first["rho_leave_one_out"]["b"]["mean"] == pytest.approx(np.mean([0.5 if i % 2 else -0.5 for i in range(11)]))
    against = found["against_random"]
    assert against["top_sentence_drop"]["a"][0]["mean"] == pytest.approx(0.2)  # 0.3 against the mean drop 0.1
    assert against["top1_leave_one_out"]["a"][0]["mean"] == pytest.approx(0.75)  # 1 against 1/4
    assert against["top_sentence_drop"]["b"][0]["mean"] == pytest.approx(0.0)
    (pair,) = found["between"]["top_sentence_drop"]
    assert (pair["a"], pair["b"]) == ("a", "b")
    assert pair["by_layer"][0]["mean"] == pytest.approx(0.2) and pair["by_layer"][0]["n"] == 11
    assert found["means"]["rho_surrogate"]["a"][0]["n"] == 0  # no surrogate: undefined, not 0
    assert found["held_out_r2"]["mean"] == pytest.approx(0.5)


def test_its_sentences_say_what_the_intervals_allow():
    said = summarize(questions(), ["a", "b"], LABELS)["verdicts"]
    assert ("Method A at the embeddings: deleting its top context sentence lowers the answer's probability by 0.300, above a random "
            "context sentence by +0.200 [+0.200, +0.200] (12 questions).") in said
    assert ("Method B at the embeddings: deleting its top context sentence lowers the answer's probability by 0.100, not told apart "
            "from a random context sentence (+0.000 [+0.000, +0.000], 11 questions).") in said
    rho_b = next(sentence for sentence in said if sentence.startswith("Method B at the embeddings: its sentences rank as leaving"))
    assert "not told apart from a random ranking" in rho_b  # ±0.5 around a mean of 1/22: the interval covers 0
    assert ("Method A against Method B at the embeddings on the drop its top sentence's deletion causes: +0.200 [+0.200, +0.200], "
            "told apart (11 questions).") in said
    few = summarize(questions()[:4], ["a", "b"], LABELS)["verdicts"]
    assert ("Method A at the embeddings: deleting its top context sentence lowers the answer's probability by 0.300, 4 questions are too "
            "few to tell it from a random context sentence (+0.200).") in few
    assert not any("ContextCite" in sentence for sentence in said)  # no surrogate was fitted: nothing said of it


def test_the_verb_writes_each_question_as_it_goes_and_resumes_without_computing_again(tiny_model_dirs, tmp_path,
                                                                                       monkeypatch):
    from rcqa.cli import main

    chosen = [gallery_example(name) for name in ("lighthouse-who", "comet-who")]
    paragraphs = [{"context": e.passage, "qas": [{"id": e.id, "question": e.question, "answers": [
        {"text": a.text, "answer_start": a.start_char} for a in e.answers]}]} for e in chosen]
    data, out = tmp_path / "squad.json", tmp_path / "check"
    data.write_text(json.dumps({"version": "1.1", "data": [{"title": "gallery", "paragraphs": paragraphs}]}))
    verb = ["sentence-check", "--data", str(data), "--out", str(out), "--model", tiny_model_dirs["bert"],
            "--methods", "attnlrp", "gradient_x_activation"]
    assert main([*verb, "--ablations", "8"]) == 0
    lines = (out / "questions.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["protocol"]["ablations"] == 8 and len(lines) == 3
    rows = [json.loads(line) for line in lines[1:]]
    document = json.loads((out / "sentence-check.json").read_text())
    assert document["questions"] == 2 and document["layers"][0] == "embeddings"
    for name in ("attnlrp", "gradient_x_activation"):
        drops = [row["checks"][name]["top_sentence_drop"][0] for row in rows if name in row["checks"]]
        defined = [value for value in drops if value is not None]
        assert defined  # the passages hold 4 sentences and more: every method's top one is read
        assert document["means"]["top_sentence_drop"][name][0]["n"] == len(defined)
        assert document["means"]["top_sentence_drop"][name][0]["mean"] == pytest.approx(np.mean(defined))

    def computed_again(*_):
        raise AssertionError("a question kept in questions.jsonl was computed again")

    monkeypatch.setattr(over_questions, "check_question", computed_again)
    assert main([*verb, "--ablations", "8"]) == 0
    assert json.loads((out / "sentence-check.json").read_text()) == document
    assert main([*verb, "--ablations", "16"]) == 2  # another protocol: refused in a sentence, nothing mixed
    assert (out / "questions.jsonl").read_text().splitlines() == lines


def test_a_bound_near_zero_never_reads_as_zero_when_the_interval_excludes_it():
    from rcqa.faithfulness.sentences.over_questions import _interval

    assert _interval({"mean": 0.0286, "low": 0.000166, "high": 0.0587}) == "+0.029 [+1.7e-04, +0.059]"
    assert _interval({"mean": 0.0, "low": 0.0, "high": 0.0}) == "+0.000 [+0.000, +0.000]"
