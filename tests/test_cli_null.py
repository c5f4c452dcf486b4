"""The command line with "no answer": answer --json's no_answer, --allow-null / --no-null, evaluate on v2 files."""
import json

from rcqa.gallery import GALLERY
from tests.test_cli import run


def answer_json(capsys, tmp_path, model, *flags):
    example = GALLERY[0]
    passage = tmp_path / "passage.txt"
    passage.write_text(example.passage)
    status, out, _ = run(capsys, "answer", "--passage-file", str(passage), "--question", example.question,
                         "--model", model, "--json", *flags)
    assert status == 0
    return json.loads(out)


def test_answer_json_gains_no_answer_only_where_null_is_allowed(capsys, tmp_path, tiny_model_dirs):
    plain = answer_json(capsys, tmp_path, tiny_model_dirs["bert"])
    assert plain["no_answer"] is None and not any(e["no_answer"] for e in plain["nbest"])
    # --allow-null on a model without a card: threshold 0, and the null entry takes its place in the n-best list
    result = answer_json(capsys, tmp_path, tiny_model_dirs["bert"], "--allow-null")
    null = result["no_answer"]
    assert set(null) == {"score", "probability", "threshold", "chosen", "window", "best_span_score"}
    assert null["threshold"] == 0.0 and 0 < null["probability"] < 1
    assert (result["answer"] == "") is null["chosen"]
    entry = next(e for e in result["nbest"] if e["no_answer"])
    assert entry["text"] == "" and entry["label"] == "no answer" and entry["probability"] == null["probability"]
    assert sum(e["probability"] for e in result["nbest"]) <= 1 + 1e-6


def test_no_null_overrides_a_squad2_card(capsys, tmp_path, tiny_model_dirs):
    import shutil
    folder = tmp_path / "squad2"
    shutil.copytree(tiny_model_dirs["bert"], folder)
    (folder / "rcqa_card.json").write_text(json.dumps({"no_answer": {"threshold": -1e9}}))
    abstaining = answer_json(capsys, tmp_path, str(folder))
    assert abstaining["no_answer"]["chosen"] and abstaining["answer"] == "" and abstaining["start_char"] is None
    assert answer_json(capsys, tmp_path, str(folder), "--no-null")["no_answer"] is None


def test_evaluate_reports_the_official_v2_metrics_on_a_file_with_unanswerables(capsys, tmp_path, tiny_model_dirs):
    paragraphs = [{"context": e.passage, "qas": [
        {"id": f"{i}", "question": e.question, "answers": [{"text": a.text, "answer_start": a.start_char}
                                                          for a in e.answers]},
        {"id": f"{i}-no", "question": "Which colour was the moon?", "answers": [], "is_impossible": True}]}
        for i, e in enumerate(GALLERY[:2])]
    data = tmp_path / "v2.json"
    data.write_text(json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": paragraphs}]}))
    status, out, _ = run(capsys, "evaluate", "--data", str(data), "--model", tiny_model_dirs["bert"], "--json",
                         "--no-null")
    metrics = json.loads(out)
    assert status == 0 and (metrics["total"], metrics["HasAns_total"], metrics["NoAns_total"]) == (4, 2, 2)
    assert metrics["NoAns_exact"] == 0.0 and metrics["threshold"] is None  # never abstaining, every NoAns is wrong
    assert metrics["best_f1"] >= metrics["f1"] and metrics["best_exact"] >= metrics["exact"]
    assert {"best_f1_thresh", "best_exact_thresh", "HasAns_f1", "NoAns_f1"} <= metrics.keys()
