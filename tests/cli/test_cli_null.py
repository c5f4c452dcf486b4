"""The command line with "no answer": answer --json's no_answer, --allow-null / --no-null, evaluate on v2 files."""
import dataclasses
import json
from pathlib import Path

from rcqa.dataset.manifest import RunCounts
from rcqa.gallery import GALLERY
from tests.helpers.cli import run


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


def v2_file(tmp_path, passages: int):
    """The first gallery passages, each with its question and one unanswerable question, as a SQuAD v2.0 file."""
    paragraphs = [{"context": e.passage, "qas": [
        {"id": f"{i}", "question": e.question, "answers": [{"text": a.text, "answer_start": a.start_char}
                                                          for a in e.answers]},
        {"id": f"{i}-no", "question": "Which colour was the moon?", "answers": [], "is_impossible": True}]}
        for i, e in enumerate(GALLERY[:passages])]
    data = tmp_path / "v2.json"
    data.write_text(json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": paragraphs}]}))
    return data


def test_evaluate_reports_the_official_v2_metrics_on_a_file_with_unanswerables(capsys, tmp_path, tiny_model_dirs):
    data = v2_file(tmp_path, 2)
    status, out, _ = run(capsys, "evaluate", "--data", str(data), "--model", tiny_model_dirs["bert"], "--json",
                         "--no-null")
    metrics = json.loads(out)
    assert status == 0 and (metrics["total"], metrics["HasAns_total"], metrics["NoAns_total"]) == (4, 2, 2)
    assert metrics["NoAns_exact"] == 0.0 and metrics["threshold"] is None  # never abstaining, every NoAns is wrong
    assert metrics["best_f1"] >= metrics["f1"] and metrics["best_exact"] >= metrics["exact"]
    assert {"best_f1_thresh", "best_exact_thresh", "HasAns_f1", "NoAns_f1"} <= metrics.keys()


def explain_json(tmp_path, model, *flags, example_id="library-unanswerable"):
    from rcqa.cli import main
    from rcqa.gallery import gallery_example

    example = gallery_example(example_id)
    (tmp_path / "passage.txt").write_text(example.passage)
    out = tmp_path / "result.json"
    assert main(["explain", "--passage-file", str(tmp_path / "passage.txt"), "--question", example.question,
                 "--json", str(out), "--model", model, "--no-cache", *flags]) == 0
    return example, json.loads(out.read_text())


def null_log_prob_by_hand(model_dir, example, window_tokens):
    """log softmax(start)[CLS] + log softmax(end)[CLS] of the model's own logits on the analysed window's tokens,
    read with transformers alone."""
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForQuestionAnswering.from_pretrained(model_dir).eval()
    encoded = tokenizer(example.question, example.passage, return_tensors="pt")
    assert tokenizer.convert_ids_to_tokens(encoded["input_ids"][0]) == window_tokens  # one window holds it all
    with torch.no_grad():
        output = model(**encoded)
    return float(output.start_logits.log_softmax(-1)[0, 0] + output.end_logits.log_softmax(-1)[0, 0])


def test_explain_target_null_explains_an_abstention_complete_to_1_percent_per_layer(capsys, tmp_path,
                                                                                    abstaining_tiny_dir):
    example, result = explain_json(tmp_path, abstaining_tiny_dir, "--target", "null", "--target", "answer_vs_null")
    assert result["answer"]["no_answer"]["chosen"] and result["answer"]["answer"] == ""
    assert "no answer (p = " in capsys.readouterr().err
    rejected = result["answer"]["nbest"][0]
    assert [t["name"] for t in result["targets"]] == ["null", "answer_vs_null"]
    assert all(t["null_token"] == 0 and t["span"] == rejected["text"] for t in result["targets"])
    # completeness at the default settings, every layer and both targets
    assert len(result["completeness"]) == 2 * len(result["layers"])
    assert max(c["relative_error"] for c in result["completeness"]) <= 0.01
    by_hand = null_log_prob_by_hand(abstaining_tiny_dir, example, result["tokens"])
    assert all(abs(c["f_input"] - by_hand) < 1e-4 for c in result["completeness"] if c["target"] == "null")
    assert result["analyses"]["target"] == "null"
    assert result["analyses"]["category_labels"]["answer"] == "answer (the rejected best span)"
    assert "allow_null" not in result["settings"]  # the card decided


def test_explain_no_null_decodes_without_no_answer_and_keys_the_cache_apart(tmp_path, abstaining_tiny_dir):
    from rcqa.attribution.cache import ResultCache
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.gallery import gallery_example

    _, result = explain_json(tmp_path, abstaining_tiny_dir, "--no-null", "--target", "answer_vs_null")
    assert result["answer"]["no_answer"] is None and result["answer"]["answer"] == result["answer"]["nbest"][0]["text"]
    assert result["settings"]["allow_null"] is False
    assert result["analyses"]["category_labels"]["answer"] == "answer (the best span, chosen over no answer)"
    example = gallery_example("library-unanswerable")
    keys = {ResultCache.key("f", example, ExplainSettings(allow_null=allowed)) for allowed in (None, True, False)}
    assert len(keys) == 3
    assert ResultCache.key("f", example, ExplainSettings()) == ResultCache.key("f", example, ExplainSettings(allow_null=None))


def test_faithfulness_decodes_with_allow_null(tmp_path, tiny_model_dirs):
    from rcqa.cli import main
    from rcqa.gallery import gallery_example

    example = gallery_example("library-unanswerable")
    (tmp_path / "passage.txt").write_text(example.passage)
    documents = {}
    for flag in ("--allow-null", "--no-null"):
        out = tmp_path / f"{flag}.json"
        assert main(["faithfulness", "--passage-file", str(tmp_path / "passage.txt"), "--question", example.question,
                     "--json", str(out), "--model", tiny_model_dirs["bert"], "--methods", "gradient", "--k", "2",
                     "--draws", "1", "--tolerance", "0", "--steps", "2", flag]) == 0
        documents[flag] = json.loads(out.read_text())
    null = documents["--allow-null"]["answer"]["no_answer"]
    assert null["threshold"] == 0.0 and 0 < null["probability"] < 1
    assert documents["--no-null"]["answer"]["no_answer"] is None


def test_reproduce_takes_allow_null_into_its_job_and_manifest(monkeypatch, tmp_path, abstaining_tiny_dir):
    from rcqa.cli import main
    from rcqa.dataset import runner
    from rcqa.gallery import gallery_example

    example = gallery_example("library-unanswerable")
    data = tmp_path / "v2.json"
    data.write_text(json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": [{
        "context": example.passage, "qas": [{"id": "q", "question": example.question, "answers": [],
                                             "is_impossible": True}]}]}]}))
    given = {}

    def capture(job, examples, manifest, folder, **_):
        given.update(job=job, examples=examples, manifest=manifest)
        return dataclasses.replace(manifest, counts=RunCounts(total=1, done=0, failed=0))

    monkeypatch.setattr(runner, "reproduce", capture)
    assert main(["reproduce", "--data", str(data), "--out", str(tmp_path / "run"), "--model", abstaining_tiny_dir,
                 "--no-null", "--tolerance", "0", "--steps", "2"]) == 0
    job = given["job"]
    assert job.settings.allow_null is False and given["manifest"].analysis.settings["allow_null"] is False
    # what the workers then record: no abstention with --no-null, an abstention where the card decides
    (row,), _, _ = runner.explain_chunk(job, given["examples"])
    assert row["abstained"] is None and row["null_probability"] is None
    from dataclasses import replace
    (row,), _, _ = runner.explain_chunk(replace(job, settings=replace(job.settings, allow_null=None)),
                                        given["examples"])
    assert row["abstained"] is True and 0 < row["null_probability"] < 1


def test_a_no_answer_card_changes_the_fingerprint_and_nothing_else_does(tiny_model_dirs, abstaining_tiny_dir, tmp_path):
    # equal fingerprints must mean equal answers: the same weights abstain under one card and answer under none
    import shutil

    from rcqa.model import load_model

    plain, abstaining = load_model(tiny_model_dirs["bert"]), load_model(abstaining_tiny_dir)
    assert plain.fingerprint != abstaining.fingerprint
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dirs["bert"], copy)
    assert load_model(str(copy)).fingerprint == plain.fingerprint  # another folder, no card: the same model


def test_evaluate_against_compares_two_models_question_by_question_each_at_its_own_threshold(capsys, tmp_path,
                                                                                             tiny_model_dirs):
    import shutil

    data = v2_file(tmp_path, 3)
    models = {}
    for name, threshold in (("always", -1e9), ("never", 1e9)):  # abstains on every question / on none
        models[name] = str(shutil.copytree(tiny_model_dirs["bert"], tmp_path / name))
        (tmp_path / name / "rcqa_card.json").write_text(json.dumps({"no_answer": {"threshold": threshold}}))
    own = {name: json.loads(run(capsys, "evaluate", "--data", str(data), "--model", folder, "--json")[1])
           for name, folder in models.items()}
    status, out, _ = run(capsys, "evaluate", "--data", str(data), "--model", models["always"], "--against",
                         models["never"], "--json")
    against = json.loads(out)["against"]
    assert status == 0 and own["always"]["f1"] == 50.0  # the three unanswerable right, the three answerable wrong
    assert (against["f1"], against["against_f1"]) == (own["always"]["f1"], own["never"]["f1"])
    assert against["difference"]["mean"] == own["always"]["f1"] - own["never"]["f1"]
    assert against["difference"]["n"] == 6 and against["threshold"] == 1e9 and against["model"] == models["never"]
    status, out, _ = run(capsys, "evaluate", "--data", str(data), "--model", models["always"], "--against",
                         models["never"])
    low, high = against["difference"]["low"], against["difference"]["high"]
    (overall,) = [line for line in out.splitlines() if "over 6 questions" in line]
    assert status == 0 and f"[{low:+.2f}, {high:+.2f}] over 6 questions" in overall
    assert ("not told apart" in overall) == (low <= 0 <= high)
    # "always" gets the unanswerable right and the answerable wrong, "never" the other way round, by construction
    assert (against["HasAns"]["HasAns_f1"], against["NoAns"]["NoAns_f1"]) == (own["always"]["HasAns_f1"], 100.0)
    assert (against["HasAns"]["against_HasAns_f1"], against["NoAns"]["against_NoAns_f1"]) == (
        own["never"]["HasAns_f1"], 0.0)
    assert f"  NoAns: NoAns F1 100.00 against 0.00: {models['always']} − {models['never']} +100.00 points" in out
    assert "by_kind" not in against  # ids that name no kind of negative
    hard_set = Path(__file__).parents[1] / "data" / "hard_unanswerable.json"
    status, out, _ = run(capsys, "evaluate", "--data", str(hard_set), "--model", models["always"], "--against",
                         models["never"], "--json")
    kinds = json.loads(out)["against"]["by_kind"]  # the set's five kinds: 10, 10, 5, 5 and 10 questions
    assert {kind: (c["NoAns_f1"], c["against_NoAns_f1"], c["difference"]["n"]) for kind, c in kinds.items()} == {
        "antonym": (100.0, 0.0, 10), "entity_swap": (100.0, 0.0, 10), "negation": (100.0, 0.0, 5),
        "impossible_condition": (100.0, 0.0, 5), "mutual_exclusion": (100.0, 0.0, 10)}
    status, out, _ = run(capsys, "evaluate", "--data", str(hard_set), "--model", models["always"], "--against",
                         models["never"])
    assert (f"  antonym: NoAns F1 100.00 against 0.00: {models['always']} − {models['never']} +100.00 points, 95 % "
            "interval [+100.00, +100.00] over 10 questions; " + f"{models['always']} scores higher.") in out


def test_evaluate_against_refuses_a_file_without_unanswerable_questions(capsys, tmp_path, tiny_model_dirs):
    from rcqa.negatives import squad_v2_document

    data = tmp_path / "v1.json"
    data.write_text(json.dumps(squad_v2_document([e for e in GALLERY[:2] if e.answers])))
    status, _, err = run(capsys, "evaluate", "--data", str(data), "--model", tiny_model_dirs["bert"], "--against",
                         tiny_model_dirs["bert"])
    assert status == 2 and "--against compares models on a file with unanswerable questions" in err
    assert "Traceback" not in err


def test_the_comparisons_sentence_ranks_only_where_the_interval_excludes_zero():
    from rcqa.cli.model import paired_sentence

    def against(mean, low, high):
        return {"model": "B", "f1": 75.0, "against_f1": 75.0 - mean, "told_apart": low > 0 or high < 0,
                "difference": {"mean": mean, "low": low, "high": high, "n": 1200}}

    assert paired_sentence("A", against(1.34, 0.97, 1.69)) == (
        "F1 75.00 against 73.66: A − B +1.34 points, 95 % interval [+0.97, +1.69] over 1,200 questions; "
        "A scores higher.")
    assert paired_sentence("A", against(-0.5, -0.9, -0.1)).endswith("; A scores lower.")
    assert paired_sentence("A", against(0.4, -0.2, 1.0)).endswith("; not told apart.")
