"""The hand-written hard set (tests/data/hard_unanswerable.json): 40 unanswerable questions of SQuAD 2.0's hard kinds
and 40 answerable ones about the same passages; and `evaluate`'s abstention per kind on it."""
import json
from collections import Counter
from pathlib import Path

import pytest

from rcqa.data import load_examples
from rcqa.gallery import GALLERY
from rcqa.negatives import negative_kind

HARD = Path(__file__).parents[1] / "data" / "hard_unanswerable.json"


def test_the_set_holds_ten_of_each_hard_kind_and_forty_answerable_questions():
    document = json.loads(HARD.read_text())
    questions = [qa for article in document["data"] for paragraph in article["paragraphs"] for qa in paragraph["qas"]]
    kinds = Counter(qa["kind"] for qa in questions)
    assert kinds["answerable"] == 40 and sum(kinds.values()) == 80
    assert (kinds["antonym"], kinds["entity_swap"], kinds["mutual_exclusion"]) == (10, 10, 10)
    assert kinds["negation"] + kinds["impossible_condition"] == 10 and kinds["negation"] and kinds["impossible_condition"]
    # the kind written on each question is the one its id names, so `evaluate` reports it
    assert all(negative_kind(qa["id"]) == (None if qa["kind"] == "answerable" else qa["kind"]) for qa in questions)
    assert all(qa["is_impossible"] == (qa["kind"] != "answerable") for qa in questions)
    assert len({qa["id"] for qa in questions}) == 80 and len({qa["question"] for qa in questions}) == 80


def test_every_gold_answer_is_where_it_says_and_the_passages_are_the_gallerys_and_twenty_new_ones():
    examples = load_examples(HARD)
    answerable = [e for e in examples if not e.is_impossible]
    assert all(e.passage[a.start_char:a.start_char + len(a.text)] == a.text for e in answerable for a in e.answers)
    passages = {e.passage for e in examples}
    gallery = {e.passage for e in GALLERY}
    assert len(passages & gallery) == 10 and len(passages - gallery) == 20
    # the answerable questions cover every passage, so a passage is never a sign that there is no answer
    assert {e.passage for e in answerable} == passages


def test_evaluate_reports_the_share_abstained_on_for_each_kind(tiny_model_dirs, capsys):
    from rcqa.cli import main
    from rcqa.model import load_model
    from rcqa.qa import answer

    examples = load_examples(HARD)
    assert main(["evaluate", "--data", str(HARD), "--model", tiny_model_dirs["bert"], "--allow-null",
                 "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    qa_model = load_model(tiny_model_dirs["bert"])  # threshold 0 with null allowed and no card
    abstained = {e.id: answer(qa_model, e.passage, e.question, allow_null=True).abstained
                 for e in examples if e.is_impossible}
    for kind, scores in metrics["by_kind"].items():
        mine = [qid for qid in abstained if negative_kind(qid) == kind]
        assert scores["NoAns_exact"] == pytest.approx(100 * sum(abstained[q] for q in mine) / len(mine))
    assert main(["evaluate", "--data", str(HARD), "--model", tiny_model_dirs["bert"], "--allow-null"]) == 0
    lines = capsys.readouterr().out.splitlines()
    shown = metrics["by_kind"]["antonym"]["NoAns_exact"]
    assert f"  antonym: abstains on {shown:.0f} % of 10 unanswerable" in lines
