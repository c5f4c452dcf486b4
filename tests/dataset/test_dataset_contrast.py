"""`reproduce --contrast`: a row per question with its foil and lens margin, a question without the foil skipped
with its reason (no failure), and the report's contrast section on rows whose numbers were worked out by hand."""
import dataclasses
import json

import pytest
import torch

from rcqa.attribution.settings import ExplainSettings
from rcqa.dataset import store
from rcqa.dataset.aggregate import load_run, summarize
from rcqa.dataset.conclusions import contrast_verdict, verdicts
from rcqa.dataset.manifest import RunCounts, RunManifest
from rcqa.dataset.report import write
from rcqa.dataset.runner import Job, _Run, explain_chunk
from rcqa.gallery import gallery_example
from tests.helpers.contrast_runs import contrast_cell, contrast_rows
from tests.helpers.hand_runs import MANIFEST, row, write_manifest_json, write_run


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_a_question_without_a_distractor_number_is_skipped_not_failed(tiny_model_dirs, tmp_path):
    job = Job(tiny_model_dirs["bert"], ExplainSettings(contrast="distractor-number", tolerance=None, steps=2), "l2", 5)
    rows, failures, results = explain_chunk(job, [gallery_example("orchard-how-many"),
                                                  gallery_example("lighthouse-who")])
    assert [r["id"] for r in rows] == ["orchard-how-many"] and len(results) == 1
    assert failures == [{"id": "lighthouse-who", "skipped": True,
                         "reason": "not a quantifier question (no 'how many' / 'how much'): it has no distractor "
                                   "number"}]
    cell = json.loads(rows[0]["contrast"])
    layers = len(rows[0]["layers"])
    assert cell["foil"]["request"] == "distractor-number" and cell["foil"]["text"] in gallery_example(
        "orchard-how-many").passage
    assert len(cell["category_foil"]) == len(cell["lens_margin"]) == layers
    # the foil is one number word, written once in the passage: its share is how often it is among the top-k
    assert len(cell["foil"]["text"].split()) == 1
    assert cell["category_foil"] == [100 * sum(w["word"] == cell["foil"]["text"] for w in layer) / len(layer)
                                     for layer in rows[0]["top_k"]]
    # other numbers: top words tagged CD that are neither in the answer nor the foil
    assert cell["category_other_numbers"] == [
        pytest.approx(100 * sum(w["is_number"] and not w["answer"] and w["word"] != cell["foil"]["text"]
                                for w in layer) / len(layer), abs=0.01) for layer in rows[0]["top_k"]]
    # the run's bookkeeping: skipped is neither failed nor counted among the failures, and is not done again
    manifest = {**MANIFEST, "failed": [{"id": "lighthouse-who", "reason": "an earlier failure"}], "runs": []}
    (tmp_path / store.SHARDS).mkdir()
    write_manifest_json(tmp_path, manifest)
    run = _Run.open(tmp_path, RunManifest.from_dict(manifest),
                    [gallery_example(i) for i in ("orchard-how-many", "lighthouse-who")], None)
    run.record(rows, failures, [])
    saved = json.loads((tmp_path / store.MANIFEST).read_text())
    assert saved["counts"] == {"total": 2, "done": 1, "failed": 0, "skipped": 1}
    assert saved["skipped"] == [{"id": "lighthouse-who", "reason": failures[0]["reason"]}] and not saved["failed"]
    assert run.this_run.failed == 0


def test_a_contrast_run_summarises_shares_margins_and_the_quantifier_claim(tmp_path):
    folder = write_run(tmp_path / "contrast", contrast_rows(late_other=20, em_of_c=0.0),
                       {**MANIFEST, "skipped": [{"id": "d", "reason": "not a quantifier question"}]})
    summary = summarize(load_run(folder))
    found = summary.contrast
    assert found["n"] == 3 and found["foil"] == "distractor-number" and summary.n_skipped == 1
    assert found["shares"]["other_numbers"] == pytest.approx([20 / 3, 30, 20, 0])  # b's undefined share left out
    assert found["shares"]["foil"] == pytest.approx([40, 30, 20 / 3, 50])
    assert found["shares"]["answer"] == pytest.approx([10, 30, 70, 50])
    assert found["lens_margin"] == pytest.approx([-2.5 / 3, 1.0 / 3, 2.0, 3.0])
    assert found["lens_ahead"] == pytest.approx([100 / 3, 200 / 3, 100, 100])
    assert found["exact_match"] == pytest.approx(200 / 3)
    # without the last block: other numbers early third (embeddings) 6.7 %, late third (block 1) 20 %, while the
    # foil's own share falls (40 % to 6.7 %); 2 of 3 answered exactly
    verdict = contrast_verdict(found)
    assert verdict.holds is True and "other numbers' share early layers 6.7%, late layers 20.0%" in verdict.evidence
    assert "in the target by construction: 40.0% and 6.7%" in verdict.evidence
    assert "EM 66.7% over 3 questions" in verdict.evidence
    assert verdicts(summary)[-1] == verdict
    write([folder], tmp_path / "report", images=False)
    page = (tmp_path / "report" / "report.html").read_text()
    assert "Why this answer and not the foil?" in page and "<th>other numbers %</th>" in page
    assert "The paper&#x27;s quantifier claim holds on this model under this test." in page


@pytest.mark.parametrize("late_other, em_of_c", [(0.0, 1.0), (20.0, 0.0)])
def test_the_quantifier_claim_fails_when_the_focus_falls_or_the_answers_are_wrong(tmp_path, late_other, em_of_c):
    rows = contrast_rows(late_other, em_of_c)
    if late_other == 0.0:  # without the last block: early (embeddings) 16.7 %, late (block 1) 0 %: the focus falls
        rows[0]["contrast"] = contrast_cell([0, 20, 40, 50], [-1.0, 0.5, 2.0, 3.0], [30, 20, 0, 0])
    else:
        rows[1]["em"] = 0.0  # 1 of 3 answered exactly
    found = summarize(load_run(write_run(tmp_path / "run", rows))).contrast
    assert contrast_verdict(found).holds is False


def test_a_run_whose_rows_predate_the_other_numbers_share_cannot_tell_the_claim(tmp_path):
    rows = contrast_rows(20.0, 1.0)
    for one in rows:  # the foil's share rises here, yet it is no evidence for the claim
        cell = json.loads(one["contrast"])
        one["contrast"] = contrast_cell([0, 20, 40, 50], cell["lens_margin"])
    found = summarize(load_run(write_run(tmp_path / "run", rows))).contrast
    assert "other_numbers" not in found["shares"]
    verdict = contrast_verdict(found)
    assert verdict.holds is None and "predate the other numbers' share" in verdict.evidence


def test_a_run_without_a_contrast_has_no_contrast_section(tmp_path):
    summary = summarize(load_run(write_run(tmp_path / "plain", [row("a"), row("b"), row("c")])))
    assert summary.contrast is None and len(verdicts(summary)) == 4


def test_reproduce_questions_quantifier_keeps_only_how_many_and_how_much_before_the_limit(tiny_model_dirs, tmp_path,
                                                                                          monkeypatch):
    from rcqa.cli import main
    from rcqa.dataset import runner

    questions = ["Who built it?", "How many towers are there?", "When was it built?", "How much did it cost?",
                 "How many bells ring?"]
    passage = "Ann built it in 1900 with 3 towers; it cost 40 pounds and 2 bells ring."
    data = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": passage, "qas": [
        {"id": f"q{i}", "question": q, "answers": [{"text": "Ann", "answer_start": 0}]}
        for i, q in enumerate(questions)]}]}]}
    (tmp_path / "few.json").write_text(json.dumps(data))
    seen = {}

    def record(job, examples, manifest, out, **options):
        seen.update(ids=[e.id for e in examples], data=manifest.data)
        return dataclasses.replace(manifest, counts=RunCounts(total=len(examples), done=len(examples), failed=0))

    monkeypatch.setattr(runner, "reproduce", record)
    assert main(["reproduce", "--data", str(tmp_path / "few.json"), "--out", str(tmp_path / "run"), "--model",
                 tiny_model_dirs["bert"], "--questions", "quantifier", "--limit", "2"]) == 0
    assert seen["ids"] == ["q1", "q3"] and seen["data"].questions == "quantifier" and seen["data"].limit == 2
    assert main(["reproduce", "--data", str(tmp_path / "few.json"), "--out", str(tmp_path / "run"), "--model",
                 tiny_model_dirs["bert"]]) == 0
    assert seen["ids"] == [f"q{i}" for i in range(5)] and "questions" not in seen["data"].to_dict()  # old runs still resume


def test_a_boundary_contrast_row_keeps_the_share_of_the_words_of_both_spans(tiny_model_dirs):
    from rcqa.model import load_model
    from rcqa.qa import answer
    from rcqa.text import written_words
    from rcqa.types import overlaps

    example = gallery_example("orchard-how-many")
    found = answer(load_model(tiny_model_dirs["bert"]), example.passage, example.question)
    best = found.best
    rank, foil = next((r, s) for r, s in enumerate(found.nbest) if s.overlaps(best.start_char, best.end_char)
                      and (s.start_char, s.end_char) != (best.start_char, best.end_char))
    job = Job(tiny_model_dirs["bert"], ExplainSettings(contrast=f"nbest:{rank}", tolerance=None, steps=2), "l2", 5)
    rows, failures, _ = explain_chunk(job, [example])
    assert not failures
    cell = json.loads(rows[0]["contrast"])
    # the passage's words (spaCy's, punctuation no word) inside both the answer and the foil
    words = [w for w in written_words(example.passage) if not w.is_punctuation]
    shared = {i for i, w in enumerate(words) if overlaps(best.start_char, best.end_char, w.start_char, w.end_char)
              and overlaps(foil.start_char, foil.end_char, w.start_char, w.end_char)}
    assert shared and cell["foil"]["text"] == foil.text
    assert cell["category_shared"] == [pytest.approx(100 * sum(w["index"] in shared for w in layer) / len(layer),
                                                     abs=0.01) for layer in rows[0]["top_k"]]
