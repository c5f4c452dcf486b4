"""The command line: JSON answers, and one clear line (exit 2) for every kind of bad input."""
import argparse
import dataclasses
import datetime as dt
import json
import time

import numpy as np
import pytest

from rcqa.attention_heads import HEAD_SCORES
from rcqa.attribution.settings import ExplainSettings
from rcqa.cli import build_parser, main
from rcqa.gallery import gallery_example
from rcqa.types import Attribution
from tests.helpers.cli import run


def test_answer_json(capsys, tmp_path, tiny_model_dirs):
    example = gallery_example("bridge-how-much")
    passage = tmp_path / "passage.txt"
    passage.write_text(example.passage)
    status, out, _ = run(capsys, "answer", "--passage-file", str(passage), "--question", example.question,
                         "--model", tiny_model_dirs["bert"], "--json")
    result = json.loads(out)
    assert status == 0
    assert {"answer", "start_char", "end_char", "score", "nbest"} <= result.keys()
    assert example.passage[result["start_char"]:result["end_char"]] == result["answer"]
    assert len(result["nbest"]) == 20 and result["n_windows"] == 1


@pytest.mark.parametrize("content, question, message", [
    ("   \n\t ", "Who?", "passage is empty"),
    ("A passage.", "   ", "question is empty"),
    (b"\x00\x01\x02\xff\xfe binary", "Who?", "not UTF-8"),
    ("\x00\x01\x02\x03 junk \x04\x05", "Who?", "looks like binary"),
    ("word " * 15_000, "Who?", "15,000 words"),  # under the character limit: its words are counted
    ("a," * 50_000 + " The bridge cost a lot.", "Who?", "characters; the limit is 100,000"),  # one "word"
    ("a, " * 6_000, "Who?", "windows of 128 tokens; the limit is 128"),  # 12,000 tokens, under every other limit
])
def test_bad_input_is_one_clear_line(capsys, tmp_path, tiny_model_dirs, content, question, message):
    passage = tmp_path / "passage.txt"
    passage.write_bytes(content if isinstance(content, bytes) else content.encode())
    status, out, err = run(capsys, "answer", "--passage-file", str(passage), "--question", question,
                           "--model", tiny_model_dirs["bert"])
    assert status == 2
    assert message in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_non_english_text_is_answered(capsys, tmp_path, tiny_model_dirs):
    passage = tmp_path / "passage.txt"
    passage.write_text("Der Leuchtturm wurde 1872 gebaut. 灯塔建于1872年。 Маяк построен в 1872 году.")
    status, out, _ = run(capsys, "answer", "--passage-file", str(passage), "--question", "Wann?",
                         "--model", tiny_model_dirs["bert"], "--json")
    assert status == 0 and json.loads(out)["answer"]


def test_missing_model_folder_is_a_clear_error(capsys, tmp_path):
    passage = tmp_path / "passage.txt"
    passage.write_text("text")
    status, _, err = run(capsys, "answer", "--passage-file", str(passage), "--question", "q",
                         "--model", str(tmp_path))
    assert status == 2 and "no config.json" in err


def test_evaluate_json_on_a_given_file(capsys, tmp_path, tiny_model_dirs):
    example = gallery_example("comet-who")
    squad = {"data": [{"title": "t", "paragraphs": [{"context": example.passage, "qas": [
        {"id": "1", "question": example.question,
         "answers": [{"text": a.text, "answer_start": a.start_char} for a in example.answers]}]}]}]}
    data = tmp_path / "squad.json"
    data.write_text(json.dumps(squad))
    status, out, _ = run(capsys, "evaluate", "--data", str(data), "--model", tiny_model_dirs["bert"], "--json")
    metrics = json.loads(out)
    assert status == 0 and metrics["n"] == 1 and 0 <= metrics["f1"] <= 100


def test_explain_writes_the_documented_json(capsys, tmp_path, tiny_model_dirs):
    example = gallery_example("orchard-how-many")
    passage, out = tmp_path / "passage.txt", tmp_path / "result.json"
    passage.write_text(example.passage)
    argv = ["explain", "--passage-file", str(passage), "--question", example.question, "--model",
            tiny_model_dirs["bert"], "--json", str(out), "--cache-dir", str(tmp_path / "cache")]
    assert run(capsys, *argv)[0] == 0
    document = json.loads(out.read_text())
    layers = len(document["layers"])
    assert document["layers"][0] == "embeddings" and layers == 4
    assert {"words", "tokens", "scores", "completeness", "settings", "answer", "targets"} <= document.keys()
    analyses = document["analyses"]
    assert len(analyses["top_k"]) == layers and all(len(words) == 5 for words in analyses["top_k"])
    assert set(analyses["categories"]) == {"answer", "supporting", "query"}
    assert {k: len(v) for k, v in analyses["jsd"].items()} == {"full": layers, "topk_removed": layers,
                                                              "topk_kept": layers}
    assert len(analyses["quantifier_share"]) == layers  # a how-many question over a passage of numbers
    assert all(abs(sum(row) - 1) < 1e-4 for row in analyses["distribution"])
    assert document["settings"]["targets"] == ["span_log_prob"] and analyses["aggregation"] == "l2"
    assert set(analyses["pos"]) == {"entity", "verb", "adjective", "adverb", "function", "punctuation", "other"}
    assert all(len(shares) == layers for shares in analyses["pos"].values())
    assert analyses["answer_pos"] is not None and abs(sum(analyses["answer_pos"].values()) - 100) < 1e-6
    assert document["from_cache"] is False and document["computed_at"]


def test_explain_writes_each_granularity_asked_for(capsys, tmp_path, tiny_model_dirs):
    example = gallery_example("orchard-how-many")
    passage, out = tmp_path / "passage.txt", tmp_path / "result.json"
    passage.write_text(example.passage)
    argv = ["explain", "--passage-file", str(passage), "--question", example.question, "--model",
            tiny_model_dirs["bert"], "--json", str(out), "--cache-dir", str(tmp_path / "cache"), "--steps", "2",
            "--granularity", "sentence", "--granularity", "token", "--aggregation", "sum"]
    assert run(capsys, *argv)[0] == 0
    document = json.loads(out.read_text())
    assert set(document["granularity"]) == {"sentence", "token"}
    sentences, tokens = document["granularity"]["sentence"], document["granularity"]["token"]
    signed = document["scores"][0][document["aggregations"].index("sum")]
    # the token level is the result's own scores, and each sentence's row sums its tokens' scores
    assert np.allclose(tokens["scores"], signed, atol=1e-8)
    for unit, column in zip(sentences["units"], zip(*sentences["scores"])):
        assert np.allclose(column, [sum(layer[t] for t in unit["tokens"]) for layer in signed], atol=1e-6)
    assert [u["text"] for u in sentences["units"] if u["segment"] == "question"] == [example.question]
    assert sentences["aggregation"] == "sum" and len(sentences["strongest"]) == len(document["layers"])


@pytest.fixture
def india(monkeypatch):
    """Local time five and a half hours ahead of UTC (a POSIX TZ string: no time zone database needed)."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_explain_says_a_result_came_from_the_cache_with_that_runs_time_and_no_cache_times_itself(
        capsys, tmp_path, tiny_model_dirs, india):
    example = gallery_example("comet-who")
    passage, out, cache = tmp_path / "passage.txt", tmp_path / "result.json", tmp_path / "cache"
    passage.write_text(example.passage)
    argv = ["explain", "--passage-file", str(passage), "--question", example.question, "--model",
            tiny_model_dirs["bert"], "--json", str(out), "--cache-dir", str(cache), "--steps", "4",
            "--tolerance", "0"]
    err = run(capsys, *argv)[2]
    first = json.loads(out.read_text())
    assert first["from_cache"] is False and err.endswith(f" layers in {first['seconds']:.1f} s -> {out}\n")
    err = run(capsys, *argv)[2]
    kept = json.loads(out.read_text())
    assert kept["from_cache"] is True and (kept["seconds"], kept["computed_at"]) == (first["seconds"],
                                                                                      first["computed_at"])
    local = dt.datetime.fromisoformat(first["computed_at"]) + dt.timedelta(hours=5, minutes=30)  # said in local time
    assert err.endswith(f" layers from the cache, computed in {first['seconds']:.1f} s on {local:%Y-%m-%d %H:%M} "
                        f"(--no-cache times it afresh) -> {out}\n")
    err = run(capsys, *argv, "--no-cache", "--cache-dir", str(tmp_path / "untouched"))[2]
    fresh = json.loads(out.read_text())
    assert fresh["from_cache"] is False and fresh["seconds"] != first["seconds"]  # its own run's time
    assert fresh["computed_at"] >= first["computed_at"]
    assert err.endswith(f" layers in {fresh['seconds']:.1f} s -> {out}\n") and not (tmp_path / "untouched").exists()
    (kept_file,) = cache.glob("rcqa-result-*.npz")  # as the cache kept results before they recorded their date
    kept_file.write_bytes(dataclasses.replace(Attribution.from_npz(kept_file), computed_at=None).to_npz(compact=True))
    err = run(capsys, *argv)[2]
    assert f"from the cache, computed in {first['seconds']:.1f} s before results recorded their date" in err


@pytest.mark.parametrize("extra, expected", [
    (["--preset", "paper-text"], ("riemann_right", 50, "zero", ["paper_confidence"], "l2_squared")),
    (["--preset", "paper-code"], ("paper_trapezoid", 20, "zero", ["paper_confidence"], "l2")),
    (["--preset", "paper-text", "--steps", "7", "--aggregation", "sum"],
     ("riemann_right", 7, "zero", ["paper_confidence"], "sum")),
])
def test_explain_presets_and_the_options_that_override_them(capsys, tmp_path, tiny_model_dirs, extra, expected):
    passage, out = tmp_path / "passage.txt", tmp_path / "result.json"
    passage.write_text(gallery_example("comet-who").passage)
    assert run(capsys, "explain", "--passage-file", str(passage), "--question", "Who was it named after?",
               "--model", tiny_model_dirs["bert"], "--json", str(out), "--no-cache", *extra)[0] == 0
    document = json.loads(out.read_text())
    settings = document["settings"]
    assert (settings["rule"], settings["steps"], settings["baseline"], settings["targets"],
            document["analyses"]["aggregation"]) == expected
    assert settings["tolerance"] is None
    # the zero baseline drives this random model's attributions to ~1e24: scores stay finite all the same
    distribution = np.array(document["analyses"]["distribution"])
    assert np.isfinite(np.array(document["scores"])).all() and np.allclose(distribution.sum(axis=1), 1)


def test_explain_rejects_an_unknown_span(capsys, tmp_path, tiny_model_dirs):
    passage = tmp_path / "passage.txt"
    passage.write_text(gallery_example("comet-who").passage)
    status, _, err = run(capsys, "explain", "--passage-file", str(passage), "--question", "Who?", "--model",
                         tiny_model_dirs["bert"], "--json", str(tmp_path / "o.json"), "--span", "nbest:99",
                         "--no-cache")
    assert status == 2 and "nbest:99 does not exist" in err


BENCH_FIELDS = {  # as docs/cli.md lists them
    "model", "fingerprint", "architecture", "device", "layers", "tokens", "repeats", "torch_threads",
    "all_layers_seconds", "all_layers_steps", "all_layers_completeness_error", "fixed_steps", "fixed_steps_seconds",
    "peak_rss_mb", "cache_hit_seconds", "same_work", "time_to_accuracy", "peak_rss_mb_with_captum",
    "reduced_precision"}



def test_bench_json_has_the_promised_fields(capsys, tiny_model_dirs, one_torch_thread):
    status, out, _ = run(capsys, "bench", "--model", tiny_model_dirs["bert"], "--tokens", "60", "--json")
    report = json.loads(out)
    assert status == 0
    assert report["same_work"]["max_rel_diff"] <= 1e-4
    assert {"speedup", "max_rel_diff"} <= report["same_work"].keys()
    assert {"speedup", "engine_completeness_error", "captum_completeness_error"} <= report["time_to_accuracy"].keys()
    accurate = report["time_to_accuracy"]
    assert accurate["engine_completeness_error"] <= 0.01
    # the 128-point reference is converged, and both sides' token scores are close to it
    assert accurate["reference_completeness_error"] < 1e-3
    assert accurate["engine_token_error"] < 0.05 and accurate["captum_token_error"] < 0.05
    assert report["tokens"] <= 60 and report["peak_rss_mb"] > 0 and report["all_layers_seconds"] > 0
    assert report["cache_hit_seconds"] > 0 and report["fixed_steps"] == 50 and report["fixed_steps_seconds"] > 0


def test_bench_of_a_small_random_bert_on_the_cpu_reports_every_field_within_the_tolerance(capsys, one_torch_thread):
    status, out, _ = run(capsys, "bench", "--device", "cpu", "--random-config", "layers=2,hidden=64,heads=2",
                         "--tokens", "64", "--json")
    report = json.loads(out)
    assert status == 0 and report.keys() == BENCH_FIELDS
    assert report["model"] == "random-bert-L2-H64-A2" and report["device"] == "cpu"
    assert report["layers"] == 3 and report["tokens"] <= 64  # the embeddings and 2 blocks
    assert len(report["all_layers_steps"]) == 3 and report["reduced_precision"] is None
    tolerance = ExplainSettings().tolerance
    assert report["all_layers_completeness_error"] <= tolerance
    assert report["time_to_accuracy"]["engine_completeness_error"] <= tolerance
    assert report["same_work"]["max_rel_diff"] <= 1e-4  # the engine and Captum did the same work


def test_bench_heads_times_every_head_score_against_an_attnlrp_explanation(capsys, one_torch_thread):
    status, out, _ = run(capsys, "bench", "--heads", "--device", "cpu", "--random-config",
                         "layers=2,hidden=64,heads=2", "--tokens", "48", "--repeats", "2", "--json")
    report = json.loads(out)
    seconds = report["seconds"]
    assert status == 0 and report["tokens"] <= 48 and report["repeats"] == 2
    assert seconds.keys() == {"attnlrp_explanation", "knockouts", *HEAD_SCORES} and min(seconds.values()) > 0
    ratio = seconds["attnlrp"] / seconds["attnlrp_explanation"]
    assert report["attnlrp_per_head_over_explanation"] == pytest.approx(ratio)
    assert report["met"] == (ratio < 1.5)


@pytest.mark.parametrize("shape, why", [("layers=0", "layers must be a whole number from 1 to 48"),
                                        ("hidden=64,heads=3", "hidden (64) must be a multiple of heads (3)"),
                                        ("depth=2", "expected keys layers, hidden, heads"),
                                        ("hidden=1e3", "hidden must be a whole number")])
def test_bench_refuses_a_random_shape_it_cannot_build(capsys, shape, why):
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "--random-config", shape])
    assert stopped.value.code == 2 and why in capsys.readouterr().err


def test_every_command_prints_its_help(capsys):
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name in commands:
        with pytest.raises(SystemExit) as stopped:
            main([name, "--help"])
        assert stopped.value.code == 0, name
        assert capsys.readouterr().out.startswith("usage: "), name


def test_bench_runner_times_the_runner_over_the_first_questions_into_a_new_folder(capsys, tiny_model_dirs,
                                                                                   monkeypatch, tmp_path):
    from tests.helpers.squad_files import squad_json

    examples = [gallery_example(name) for name in ("lighthouse-who", "orchard-how-many", "marathon-who")]
    data = tmp_path / "dev.json"
    data.write_text(json.dumps(squad_json(examples)))
    monkeypatch.setattr("rcqa.resources.squad_file", lambda split: data)  # dev's first questions, as the bench reads
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    status, out, _ = run(capsys, "bench", "--runner", "attnlrp", "--questions", "2", "--workers", "1",
                         "--model", tiny_model_dirs["bert"], "--json")
    report = json.loads(out)
    assert status == 0 and report["questions"] == report["done"] == 2 and report["failed"] == 0
    assert report["questions_per_hour"] == pytest.approx(2 / report["seconds"] * 3600, rel=1e-3)
    assert report["goal_per_hour"] == 20_000 and report["goal_met"] == (report["questions_per_hour"] >= 20_000)
    assert len(report["load_average_before"]) == len(report["load_average_after"]) == 3
    assert not list(tmp_path.glob("rcqa-bench-runner-*"))  # its run folder is gone


def test_bench_runner_refuses_a_method_it_does_not_know_in_one_sentence(capsys):
    status, _, err = run(capsys, "bench", "--runner", "rollout")
    assert status == 2 and "--runner takes one of integrated_gradients, attnlrp" in err
