"""Exporting an abstaining run: the checkpoint chosen on held-out questions, the tuned threshold, the dev scores."""
import json
from dataclasses import asdict
from pathlib import Path

import pytest

from rcqa.evaluate import evaluate, evaluate_v2
from rcqa.export.abstention import V2STYLE_DEV, abstention_evaluation, peak_threshold, v2style_dev
from rcqa.export.card import write_card
from rcqa.export.checkpoints import best_checkpoint, export, held_out_scores, kept_models
from rcqa.gallery import GALLERY
from rcqa.data import load_examples
from rcqa.model import load_model
from rcqa.negatives import PERTURBATIONS, negative_kind, with_negatives
from rcqa.qa import answer, best_span_and_null_odds
from rcqa.train import TrainConfig
from rcqa.types import Example, GoldAnswer

ANSWERED = [e for e in GALLERY if e.answers]
HARD_SET = Path(__file__).parents[1] / "data" / "hard_unanswerable.json"
WINDOW = {"max_len": 64, "doc_stride": 16, "max_query_len": 64}


def test_kept_models_come_in_training_order_by_step_number_not_by_name(tmp_path):
    for name in ("step-10", "step-2", "final", "step-250", "checkpoint-x"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text("{}")
    (tmp_path / "step-5").mkdir()  # no model in it: not kept
    assert [p.name for p in kept_models(tmp_path)] == ["step-2", "step-10", "step-250", "final"]


def test_the_best_checkpoint_has_the_highest_held_out_best_f1_and_a_tie_goes_to_less_training():
    scores = {"step-250": {"best_f1": 61.0}, "step-500": {"best_f1": 64.5}, "step-750": {"best_f1": 64.5},
              "final": {"best_f1": 63.9}}
    assert best_checkpoint(scores) == "step-500"
    assert best_checkpoint({"final": {"best_f1": 1.0}}) == "final"


def test_the_peak_threshold_reproduces_the_best_f1_even_where_abstaining_everywhere_is_best():
    golds = {"a": ["Paris"], "b": [], "c": []}
    examples = [Example(id=q, title="t", passage="Paris is here.", question="Where?", is_impossible=not g,
                        answers=tuple(GoldAnswer(text=t, start_char=0) for t in g)) for q, g in golds.items()]
    answered_right = {"a": ("Paris", -5.0), "b": ("here", -3.0), "c": ("here", 5.0)}
    all_wrong = {"a": ("here", -2.0), "b": ("here", -3.0), "c": ("here", -1.0)}
    for predictions, best in ((answered_right, 100.0), (all_wrong, 200 / 3)):
        metrics = evaluate_v2(examples, lambda e: predictions[e.id], None)
        threshold = peak_threshold(metrics, [odds for _, odds in predictions.values()])
        assert metrics["best_f1"] == pytest.approx(best)
        assert evaluate_v2(examples, lambda e: predictions[e.id], threshold)["f1"] == pytest.approx(best)
    # by hand: answering "a" alone (odds -5 ≤ t < -3) is right on all three; where every answer is wrong, the
    # official script's 0.0 would answer all three (odds -3, -2, -1 ≤ 0): 0 of 3, not the peak's 2 of 3
    assert peak_threshold(evaluate_v2(examples, lambda e: answered_right[e.id], None), []) == -5.0
    assert peak_threshold(evaluate_v2(examples, lambda e: all_wrong[e.id], None), [-2.0, -3.0, -1.0]) == -4.0


def test_the_best_span_with_null_odds_is_the_answer_with_no_answer_ruled_out(abstaining_tiny_dir):
    qa_model = load_model(abstaining_tiny_dir)
    for example in GALLERY:
        text, odds = best_span_and_null_odds(qa_model, example.passage, example.question)
        forced = answer(qa_model, example.passage, example.question, n_best=1, allow_null=False)
        decoded = answer(qa_model, example.passage, example.question, n_best=1, allow_null=True)
        assert text == forced.text  # the same span as decoding without "no answer"
        assert decoded.abstained  # this model's threshold (-1e9) always abstains, yet the span is still read
        assert odds == pytest.approx(decoded.no_answer.score - decoded.no_answer.best_span_score)


def test_abstention_evaluation_tunes_the_threshold_on_held_out_questions_and_scores_dev_at_it(abstaining_tiny_dir):
    qa_model = load_model(abstaining_tiny_dir)
    held_out, dev = with_negatives(ANSWERED[:3], seed=1), ANSWERED
    result = abstention_evaluation(qa_model, held_out, *v2style_dev(dev))
    threshold = result["no_answer"]["threshold"]

    def predict(example):
        return best_span_and_null_odds(qa_model, example.passage, example.question)

    # the official rule: the threshold is where held-out F1 peaks, so held-out F1 at it is the best F1
    assert evaluate_v2(held_out, predict, threshold)["f1"] == pytest.approx(result["no_answer"]["tuned_on"]["best_f1"])
    assert result["no_answer"]["tuned_on"] == {**result["no_answer"]["tuned_on"], "questions": len(held_out),
                                               "unanswerable": sum(e.is_impossible for e in held_out)}
    # v1.1 dev with answers forced: the decoder without "no answer", scored by the v1.1 metric
    forced = evaluate(dev, lambda e: answer(qa_model, e.passage, e.question, n_best=1, allow_null=False).text)
    assert {k: result["squad_v1.1_dev"][k] for k in forced} == forced
    # the v2-style dev set: dev and its negatives, scored at the held-out threshold, each kind apart
    mixed = with_negatives(dev)
    v2 = result["squad_v2style_dev"]
    assert v2["total"] == len(mixed) and v2["threshold"] == threshold
    assert v2["f1"] == pytest.approx(evaluate_v2(mixed, predict, threshold)["f1"])
    assert set(v2["by_kind"]) <= {"other_paragraph", "in_context"} and v2["by_kind"]
    assert v2["built_with"] == V2STYLE_DEV and "by_kind" in result["no_answer"]["tuned_on"]


def test_a_run_trained_with_perturbations_is_measured_on_a_dev_set_built_as_it_was_trained(abstaining_tiny_dir):
    qa_model = load_model(abstaining_tiny_dir)
    held_out = with_negatives(ANSWERED[:3], seed=1)
    result = abstention_evaluation(qa_model, held_out, *v2style_dev(ANSWERED, in_context=0.0, perturbed=1.0))
    mixed = with_negatives(ANSWERED, in_context=0.0, perturbed=1.0)
    v2 = result["squad_v2style_dev"]
    assert v2["total"] == len(mixed) and v2["built_with"] == V2STYLE_DEV + " --in-context 0.000 --perturbed 1.000"
    assert set(v2["by_kind"]) == {negative_kind(e.id) for e in mixed if e.is_impossible}
    assert set(v2["by_kind"]) & set(PERTURBATIONS)


@pytest.mark.parametrize("mix, said", [({}, "half other-paragraph, half in-context"),
                                       ({"in_context": 0.25}, "25% in-context, the rest other-paragraph"),
                                       ({"in_context": 1 / 3, "perturbed": 1 / 3},
                                        "33% in-context, 33% question perturbations (antonym, entity swap, "
                                        "negation, mutual exclusion, impossible condition, role swap, vague quantity), the rest "
                                        "other-paragraph")])
def test_the_card_says_how_the_negatives_were_mixed(mix, said, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    recipe = {**asdict(TrainConfig(negatives=1 / 3, held_out_articles=20, **mix)), "features": 10, "total_steps": 5}
    (run / "train_config.json").write_text(json.dumps(recipe))
    write_card(run, tmp_path, WINDOW, {"squad_v1.1_dev": {"exact_match": 0.0, "f1": 0.0, "n": 0}})
    assert json.loads((tmp_path / "rcqa_card.json").read_text())["data"].endswith(f"of all, {said})")


@pytest.mark.parametrize("device, said", [(None, "on 2 CPU cores"), ("cpu (16 cores)", "on 16 CPU cores"),
                                           ("cuda (NVIDIA H200)", "on one NVIDIA H200 GPU")])
def test_the_card_names_the_machine_the_run_recorded(device, said, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    recipe = {**asdict(TrainConfig()), "features": 10, "total_steps": 5, **({"device": device} if device else {})}
    (run / "train_config.json").write_text(json.dumps(recipe))  # runs before the device was recorded: 2 cores
    write_card(run, tmp_path, WINDOW, {"squad_v1.1_dev": {"exact_match": 0.0, "f1": 0.0, "n": 0}})
    assert f"answer-bearing windows, dynamic padding, {said}.\n" in (tmp_path / "README.md").read_text()


def test_a_second_stage_card_names_its_recipe_with_its_base_and_the_stage_before(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    first = {**asdict(TrainConfig(negatives=1 / 3, held_out_articles=20, epochs=0.25, recipe=None)),
             "features": 10, "total_steps": 1052}  # the first stage's card predates the recorded name
    second = {**asdict(TrainConfig(negatives=1 / 3, held_out_articles=20, epochs=0.1, in_context=1 / 3,
                                   perturbed=1 / 3, recipe="squad2-hard")), "features": 12, "total_steps": 420}
    (run / "train_config.json").write_text(json.dumps(second))
    (run / "base_card.json").write_text(json.dumps({"recipe": first, "squad_v1.1_dev": {"exact_match": 69.48,
                                                                                        "f1": 79.72, "n": 10570},
                                                    "warm_start": {"recipe": {"epochs": 1.0}}}))
    write_card(run, tmp_path, WINDOW, {"squad_v1.1_dev": {"exact_match": 0.0, "f1": 0.0, "n": 0}})
    readme = (tmp_path / "README.md").read_text()
    assert "- **Recipe:** `python -m rcqa train --recipe squad2-hard --base-model BASE`:" in readme
    assert ("- **Warm start:** BASE is the rcqa model it started from, `python -m rcqa train --recipe squad2` "
            "(1052 steps; dev EM 69.48, F1 79.72). This run trained 420 steps from its weights.") in readme


@pytest.fixture(scope="module")
def abstaining_run(tiny_model_dirs, tmp_path_factory):
    """A tiny run trained with negatives and one held-out article, keeping step-2/ beside final/."""
    from rcqa.train import TrainConfig, train

    run = tmp_path_factory.mktemp("squad2") / "run"
    train(TrainConfig(output_dir=str(run), max_len=64, doc_stride=16, batch_size=4, epochs=1.0, negatives=1 / 3,
                      held_out_articles=1, keep_every=2, checkpoint_every=100), ANSWERED, tiny_model_dirs["bert"])
    return run


def test_an_abstaining_export_carries_its_threshold_and_its_scores_on_the_card(abstaining_run, tmp_path):
    run = abstaining_run
    held_out = load_examples(run / "held_out-v2.json")
    scores = held_out_scores(run, held_out)
    assert list(scores) == [p.name for p in kept_models(run)] and "final" in scores
    chosen = best_checkpoint(scores)
    target = export(run, tmp_path / "squad2", chosen)
    write_card(run, target, WINDOW, {"squad_v1.1_dev": {"exact_match": 0.0, "f1": 0.0, "n": 0}})
    qa_model = load_model(str(target))
    evaluation = {"checkpoint": {"chosen": chosen, "held_out_best_f1": {n: s["best_f1"] for n, s in scores.items()}},
                  **abstention_evaluation(qa_model, held_out, *v2style_dev(ANSWERED))}
    write_card(run, target, WINDOW, evaluation)
    card = json.loads((target / "rcqa_card.json").read_text())
    assert card["no_answer"]["threshold"] == evaluation["no_answer"]["threshold"]
    assert card["window"] == WINDOW and card["recipe"]["negatives"] == pytest.approx(1 / 3)
    readme = (target / "README.md").read_text()
    assert readme.startswith("# rcqa default-squad2 model")
    assert f"**Checkpoint:** {chosen}" in readme and "python -m rcqa train --recipe squad2" in readme
    assert f"NoAns F1 {evaluation['squad_v2style_dev']['NoAns_f1']:.2f}" in readme
    assert "answers forced" in readme and "unanswerable questions built from it" in card["data"]


def test_the_export_command_chooses_on_held_out_questions_and_the_model_then_abstains_by_default(
        abstaining_run, tmp_path, monkeypatch, capsys):
    from rcqa.cli import main
    from rcqa.negatives import squad_v2_document

    monkeypatch.setenv("RCQA_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "squad").mkdir(parents=True)
    (tmp_path / "cache" / "squad" / "dev-v1.1.json").write_text(json.dumps(squad_v2_document(ANSWERED)))
    assert main(["export", str(abstaining_run), "--to", str(tmp_path / "out"), "--max-len", "64",
                 "--doc-stride", "16", "--hard-set", str(HARD_SET)]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    card = json.loads((tmp_path / "out" / "rcqa_card.json").read_text())
    assert card["checkpoint"]["chosen"] in {p.name for p in kept_models(abstaining_run)}
    assert card["checkpoint"] == printed["checkpoint"] and card["squad_v1.1_dev"]["n"] == len(ANSWERED)
    assert card["squad_v2style_dev"]["total"] == len(with_negatives(ANSWERED))
    import shutil

    # a copy, so that this process loads the folder afresh (it keeps the export's own load, made before the card)
    qa_model = load_model(str(shutil.copytree(tmp_path / "out", tmp_path / "shipped")))
    assert qa_model.trained_with_unanswerable and qa_model.null_threshold == card["no_answer"]["threshold"]
    # the hand-written set at the tuned threshold: each kind's abstentions counted by the decoder itself
    hard = card["hand_written"]
    examples = load_examples(HARD_SET)
    asked_kinds = {negative_kind(e.id) for e in examples if e.is_impossible}  # the kinds the set writes by hand
    abstained = {kind: sum(answer(qa_model, e.passage, e.question).abstained for e in examples
                           if negative_kind(e.id) == kind) for kind in asked_kinds}
    assert hard["file"] == "hard_unanswerable.json" and (hard["HasAns_total"], hard["NoAns_total"]) == (40, 40)
    assert {kind: m["NoAns_total"] for kind, m in hard["by_kind"].items()} == {
        "antonym": 10, "entity_swap": 10, "negation": 5, "impossible_condition": 5, "mutual_exclusion": 10}
    assert {kind: round(m["NoAns_exact"] * m["NoAns_total"] / 100) for kind, m in hard["by_kind"].items()} == \
        abstained
    line = next(line for line in (tmp_path / "out" / "README.md").read_text().splitlines() if "Hand-written" in line)
    assert f"abstains on {sum(abstained.values())} of 40 (antonym {abstained['antonym']} of 10, entity swap " \
           f"{abstained['entity_swap']} of 10," in line


def test_the_export_command_measures_a_v2_style_dev_file_it_is_given_and_names_it(abstaining_run, tmp_path,
                                                                                  monkeypatch):
    """--dev-v2: the v2-style dev file written elsewhere (where spaCy is) is what the card measures, question for
    question the set the export would have built, and its command names that file."""
    from rcqa.cli import main
    from rcqa.negatives import squad_v2_document

    monkeypatch.setenv("RCQA_CACHE_DIR", str(tmp_path / "cache"))  # no SQuAD dev here: the file is all it reads
    built = tmp_path / "dev-v2given.json"
    built.write_text(json.dumps(squad_v2_document(with_negatives(ANSWERED, in_context=1 / 3, perturbed=1 / 3))))
    assert main(["export", str(abstaining_run), "--to", str(tmp_path / "out"), "--max-len", "64", "--doc-stride", "16",
                 "--dev-v2", str(built)]) == 0
    v2 = json.loads((tmp_path / "out" / "rcqa_card.json").read_text())["squad_v2style_dev"]
    qa_model = load_model(str(tmp_path / "out"))
    given = load_examples(built)
    expected = evaluate_v2(given, lambda e: best_span_and_null_odds(qa_model, e.passage, e.question), v2["threshold"])
    assert (v2["total"], v2["f1"], v2["NoAns_total"]) == (len(given), pytest.approx(expected["f1"]),
                                                           expected["NoAns_total"])
    assert set(v2["by_kind"]) == {negative_kind(e.id) for e in given if e.is_impossible}
    assert v2["built_with"] == ("python -m rcqa negatives --data ~/.cache/rcqa/squad/dev-v1.1.json --out "
                                "dev-v2given.json")  # the run's mix had no perturbations


def test_an_abstaining_run_exported_at_a_checkpoint_given_says_so_with_its_held_out_score(abstaining_run, tmp_path,
                                                                                          monkeypatch):
    from rcqa.cli import main
    from rcqa.negatives import squad_v2_document

    monkeypatch.setenv("RCQA_CACHE_DIR", str(tmp_path / "cache"))
    built = tmp_path / "dev-v2.json"
    built.write_text(json.dumps(squad_v2_document(with_negatives(ANSWERED))))
    assert main(["export", str(abstaining_run), "--to", str(tmp_path / "out"), "--max-len", "64", "--doc-stride", "16",
                 "--dev-v2", str(built), "--checkpoint", "step-2"]) == 0
    card = json.loads((tmp_path / "out" / "rcqa_card.json").read_text())
    held_out = load_examples(abstaining_run / "held_out-v2.json")
    qa_model = load_model(str(abstaining_run / "step-2"))  # the checkpoint's own held-out score, read apart
    own = evaluate_v2(held_out, lambda e: best_span_and_null_odds(qa_model, e.passage, e.question), None)
    assert card["checkpoint"] == {"chosen": "step-2", "by": "--checkpoint",
                                  "held_out_best_f1": {"step-2": pytest.approx(own["best_f1"])}}
    assert "- **Checkpoint:** step-2, given with --checkpoint; its v2.0 F1 on the " in (
        tmp_path / "out" / "README.md").read_text()


def _with_threshold(model_dir: str, threshold: float, folder: Path) -> str:
    import shutil

    shutil.copytree(model_dir, folder)
    (folder / "rcqa_card.json").write_text(json.dumps({"no_answer": {"threshold": threshold}}))
    return str(folder)


def test_the_abstention_curve_command_reads_a_runs_kept_models_and_compares_tuned_thresholds_question_by_question(
        abstaining_run, tiny_model_dirs, tmp_path, capsys):
    from rcqa.cli import main

    always = _with_threshold(tiny_model_dirs["bert"], -1e9, tmp_path / "always")  # abstains on every question
    never = _with_threshold(tiny_model_dirs["bert"], 1e9, tmp_path / "never")
    out = tmp_path / "curve.json"
    assert main(["abstention-curve", str(abstaining_run), always, never, "--data", str(HARD_SET),
                 "--json", str(out)]) == 0
    found = json.loads(out.read_text())
    assert [row["model"] for row in found["models"]] == [*map(str, kept_models(abstaining_run)), always, never]
    assert found["kinds"] == ["antonym", "entity_swap"] and found["floor"] == 85.0
    steps = found["models"][:-2]
    assert all(row["threshold"] is None and "at_threshold" not in row for row in steps)  # no card, no threshold
    at_always, at_never = (row["at_threshold"] for row in found["models"][-2:])
    assert at_always["abstained"] == at_always["of"] == 20 and at_always["HasAns_f1"] == 0.0  # 10 of each kind
    assert at_never["abstained"] == 0
    # never against always, on each of the 20 questions: -1, so the mean and its whole interval are -1
    # and all 20 are abstained on by the first only: McNemar's exact p is 2 · 0.5 ** 20
    assert found["compared"] == [{"model": never, "against": always, "abstained_difference":
                                  {"mean": -1.0, "low": -1.0, "high": -1.0, "n": 20}, "only_model": 0,
                                  "only_against": 20, "mcnemar_p": pytest.approx(2 * 0.5 ** 20)}]
    assert "most abstained with HasAns F1 >= 85" in capsys.readouterr().err


def test_the_curve_at_a_models_threshold_abstains_where_the_decoder_does(tiny_model_dirs, tmp_path):
    from rcqa.export.abstention import abstention_tradeoff

    examples = load_examples(HARD_SET)
    curve = abstention_tradeoff({"tiny": load_model(tiny_model_dirs["bert"])}, examples, ["antonym", "entity_swap"],
                                85.0)["models"][0]["curve"]
    middle = curve[len(curve) // 2]["threshold"]
    qa_model = load_model(_with_threshold(tiny_model_dirs["bert"], middle, tmp_path / "middle"))
    point = abstention_tradeoff({"middle": qa_model}, examples, ["antonym", "entity_swap"], 85.0)["models"][0]
    counted = [e for e in examples if e.is_impossible and negative_kind(e.id) in ("antonym", "entity_swap")]
    decided = [answer(qa_model, e.passage, e.question).abstained for e in counted]
    assert point["at_threshold"]["abstained"] == sum(decided) and 0 < sum(decided) < len(counted)
    answerable = [e for e in examples if not e.is_impossible]
    answered = {e.id: answer(qa_model, e.passage, e.question) for e in answerable}
    expected = evaluate(answerable, lambda e: "" if answered[e.id].abstained else answered[e.id].text)
    assert point["at_threshold"]["HasAns_f1"] == pytest.approx(expected["f1"])


def test_the_abstention_curve_command_refuses_an_unknown_kind_in_one_sentence(tmp_path, capsys):
    from rcqa.cli import main

    assert main(["abstention-curve", "default-squad2", "--data", str(HARD_SET), "--kinds", "antonym,synonym",
                 "--json", str(tmp_path / "c.json")]) == 2
    assert capsys.readouterr().err.startswith("error: no kind of negative is called synonym; the kinds are ")


def test_the_abstention_curve_command_labels_models_and_keeps_the_curve_on_a_card(abstaining_tiny_dir, tmp_path,
                                                                                 capsys):
    from rcqa.cli import main

    carded = _with_threshold(abstaining_tiny_dir, -1e9, tmp_path / "carded")
    out = tmp_path / "curve.json"
    assert main(["abstention-curve", f"shipped={carded}", "--data", str(HARD_SET), "--kinds", "antonym",
                 "--floor", "0", "--json", str(out), "--card", carded]) == 0
    found = json.loads(out.read_text())
    assert [row["model"] for row in found["models"]] == ["shipped"] and found["kinds"] == ["antonym"]
    assert found["models"][0]["stops"]["abstained"] == 10  # a floor of 0: abstaining on all ten antonyms keeps it
    card = json.loads((Path(carded) / "rcqa_card.json").read_text())
    assert card["abstention_tradeoff"] == found and card["no_answer"] == {"threshold": -1e9}
    assert main(["abstention-curve", f"a={carded}", f"a={carded}", "--data", str(HARD_SET),
                 "--json", str(out)]) == 2
    assert "two models are labelled a: give each its own LABEL=MODEL" in capsys.readouterr().err
    assert main(["abstention-curve", carded, "--data", str(HARD_SET), "--json", str(out),
                 "--card", str(tmp_path)]) == 2
    assert "no rcqa_card.json there to keep the curve on" in capsys.readouterr().err


def test_the_abstention_curve_command_carries_an_earlier_runs_untuned_curves_and_measures_tuned_models_again(
        abstaining_run, tiny_model_dirs, tmp_path, capsys):
    from rcqa.cli import main

    tuned = _with_threshold(tiny_model_dirs["bert"], 0.5, tmp_path / "tuned")
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert main(["abstention-curve", f"run={abstaining_run}", f"shipped={tuned}", "--data", str(HARD_SET),
                 "--json", str(first)]) == 0
    earlier = json.loads(first.read_text())
    steps = [row for row in earlier["models"] if row["model"].startswith("run/")]
    assert len(steps) >= 2
    # the run's folder is gone; its kept models' curves are carried, the tuned model is measured again
    assert main(["abstention-curve", f"shipped={tuned}", f"again={tuned}", "--data", str(HARD_SET),
                 "--json", str(second), "--keep", str(first)]) == 0
    found = json.loads(second.read_text())
    assert [row["model"] for row in found["models"]] == [*(row["model"] for row in steps), "shipped", "again"]
    assert found["models"][:len(steps)] == [{**row, "carried_from": "first.json"} for row in steps]
    assert all("carried_from" not in row for row in found["models"][len(steps):])
    assert [(c["model"], c["against"]) for c in found["compared"]] == [("again", "shipped")]
    # another floor is another curve: refused before a model loads, in one sentence
    assert main(["abstention-curve", tuned, "--data", str(HARD_SET), "--floor", "80", "--json", str(second),
                 "--keep", str(first)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "error: first.json measured another curve (floor 85.0 there, 80.0 here): nothing of it can be carried")
    (tmp_path / "notes.json").write_text('{"models": [{"name": 1}]}')
    assert main(["abstention-curve", tuned, "--data", str(HARD_SET), "--json", str(second),
                 "--keep", str(tmp_path / "notes.json")]) == 2
    assert capsys.readouterr().err.strip() == "error: --keep notes.json: not a JSON this command wrote"
