"""The training recipe end to end on a tiny model: labels, checkpoints, resume, fp16 export."""
import json
import math

import pytest
import torch
from safetensors import safe_open

from rcqa.gallery import GALLERY
from rcqa.model import load_model
from rcqa.export.card import refresh_probes_on_card, write_card
from rcqa.export.checkpoints import export
from rcqa.train import TrainConfig, featurize, length_grouped_batches, train
from tests.helpers.tiny_models import wordpiece_tokenizer

ANSWERED = [e for e in GALLERY if e.answers]


def test_features_label_the_gold_answer_tokens():
    tokenizer = wordpiece_tokenizer()
    config = TrainConfig(max_len=64, doc_stride=16)
    features = featurize(ANSWERED, tokenizer, config)
    assert len(features) >= len(ANSWERED)  # the long passage gives several windows, each with the answer
    decoded = {tokenizer.decode(f["input_ids"][f["start_positions"]:f["end_positions"] + 1]) for f in features}
    assert {"margaret ellison", "1852", "2. 4 million pounds"} <= decoded


def test_length_grouped_batches_cover_every_feature_once():
    lengths = [5, 90, 30, 60, 10, 70, 40] * 30
    batches = length_grouped_batches(lengths, 8, seed=0, epoch=0)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert batches == length_grouped_batches(lengths, 8, seed=0, epoch=0)  # deterministic
    assert batches != length_grouped_batches(lengths, 8, seed=0, epoch=1)


def test_train_resume_and_export(tmp_path, tiny_model_dirs):
    config = TrainConfig(output_dir=str(tmp_path / "run"), max_len=64, doc_stride=16, batch_size=4,
                         epochs=1.0, checkpoint_every=2, limit=6)
    final = train(config, ANSWERED, tiny_model_dirs["bert"])
    log = [json.loads(line) for line in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    total = json.loads((tmp_path / "run" / "train_config.json").read_text())["total_steps"]
    assert [entry["step"] for entry in log] == list(range(1, total + 1))
    assert torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["step"] == total
    train(config, ANSWERED, tiny_model_dirs["bert"])  # resuming a finished run trains no more steps
    assert len((tmp_path / "run" / "train_log.jsonl").read_text().splitlines()) == total

    (tmp_path / "exported").mkdir()
    probes = {"fingerprint": "f", "command": "python -m rcqa probes --model M", "layers": ["embeddings", "block 0"],
              "dev": {"questions": 4, "head": {"exact_match": [0, 25], "f1": [10, 37.5]},
                      "probe": {"exact_match": [50, 75], "f1": [60, 80.25]}, "model": {"exact_match": 25, "f1": 37.5}}}
    for stale in ("probes.json", "probes.safetensors"):  # the probes of the weights this export replaces
        (tmp_path / "exported" / stale).write_text(json.dumps(probes))
    target = exported(tmp_path / "run", tmp_path / "exported", {"exact_match": 1.0, "f1": 2.0, "n": 3})
    assert not (target / "probes.json").exists() and not (target / "probes.safetensors").exists()
    assert "Answer lens" not in (target / "README.md").read_text()
    (target / "probes.json").write_text(json.dumps(probes))  # `python -m rcqa probes` after the export
    assert refresh_probes_on_card(target)
    with safe_open(str(target / "model.safetensors"), "pt") as weights:
        assert weights.get_tensor("qa_outputs.weight").dtype == torch.float16
    qa_model = load_model(str(target))
    assert next(qa_model.model.parameters()).dtype == torch.float32
    assert (qa_model.max_len, qa_model.doc_stride) == (64, 16)
    card_text = (target / "README.md").read_text()
    assert "F1 2.00" in card_text
    assert "| head | 0.0 / 10.0 | 25.0 / 37.5 |" in card_text and "| probe | 50.0 / 60.0 | 75.0 / 80.2 |" in card_text
    assert json.loads((target / "rcqa_card.json").read_text())["probes"]["dev"]["probe"]["f1"] == [60, 80.25]
    probes["dev"]["probe"]["f1"] = [61, 81.5]  # retrained probes: the card follows without a new export
    (tmp_path / "exported" / "probes.json").write_text(json.dumps(probes))
    assert refresh_probes_on_card(target) and not refresh_probes_on_card(tmp_path)
    assert "| probe | 50.0 / 61.0 | 75.0 / 81.5 |" in (target / "README.md").read_text()
    assert "F1 2.00" in (target / "README.md").read_text()
    trained = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["model"]["qa_outputs.weight"]
    assert torch.allclose(qa_model.model.qa_outputs.weight, trained, atol=1e-3)
    assert final.is_dir()

    warm = TrainConfig(output_dir=str(tmp_path / "warm"), max_len=64, doc_stride=16, batch_size=4, epochs=2.0,
                       checkpoint_every=2, limit=6, first_step=total, learning_rate=5e-4)
    train(warm, ANSWERED, target)
    (tmp_path / "warm" / "recipe_notes.txt").write_text("Resumed twice\n  from its checkpoints.\n")
    continued = exported(tmp_path / "warm", tmp_path / "continued", {"exact_match": 3.0, "f1": 4.0, "n": 3})
    card = json.loads((continued / "rcqa_card.json").read_text())
    assert card["warm_start"]["squad_v1.1_dev"]["f1"] == 2.0 and card["warm_start"]["recipe"]["epochs"] == 1.0
    assert "warm_start" not in card["warm_start"]  # the base was trained from scratch
    assert card["recipe_notes"] == "Resumed twice from its checkpoints." and "recipe_notes" not in json.loads(
        (target / "rcqa_card.json").read_text())
    card_text = (continued / "README.md").read_text()
    assert f"--base-model BASE --first-step {total} --learning-rate 0.0005" in card_text
    assert "- **How it really ran:** Resumed twice from its checkpoints.\n" in card_text
    assert "dev EM 1.00, F1 2.00" in card_text and f"steps {total + 1}–{2 * total}" in card_text


def exported(run_dir, target, dev_scores):
    target = export(run_dir, target)
    write_card(run_dir, target, {"max_len": 64, "doc_stride": 16, "max_query_len": 64}, {"squad_v1.1_dev": dev_scores})
    return target


def test_warm_start_trains_only_the_remaining_batches_on_a_schedule_of_their_own(tmp_path, tiny_model_dirs):
    config = TrainConfig(output_dir=str(tmp_path / "warm"), max_len=64, doc_stride=16, batch_size=2,
                         epochs=2.0, checkpoint_every=100, limit=6, first_step=3, warmup_fraction=0.25,
                         learning_rate=1e-3)
    train(config, ANSWERED, tiny_model_dirs["bert"])
    log = [json.loads(line) for line in (tmp_path / "warm" / "train_log.jsonl").read_text().splitlines()]
    total = json.loads((tmp_path / "warm" / "train_config.json").read_text())["total_steps"]
    remaining = total - 3
    assert [entry["step"] for entry in log] == list(range(4, total + 1))
    warmup = int(0.25 * remaining)
    # transformers' linear schedule, counted from the warm start: up to the peak over `warmup` steps, then to 0
    expected = [1e-3 * (s / warmup if s < warmup else (remaining - s) / (remaining - warmup))
                for s in range(1, remaining + 1)]
    assert [entry["lr"] for entry in log] == pytest.approx(expected)


def test_unanswerable_questions_label_every_window_at_cls():
    from rcqa.negatives import with_negatives

    tokenizer = wordpiece_tokenizer()
    config = TrainConfig(max_len=64, doc_stride=16)
    mixed = with_negatives(ANSWERED, seed=0)
    negatives = [e for e in mixed if e.is_impossible]
    features = featurize(negatives, tokenizer, config)
    windows = tokenizer([e.question for e in negatives], [e.passage for e in negatives], truncation="only_second",
                        max_length=64, stride=16, return_overflowing_tokens=True)["input_ids"]
    assert len(features) == len(windows) > len(negatives) // 2
    assert all(f["start_positions"] == f["end_positions"] == 0 for f in features)
    assert all(f["input_ids"][0] == tokenizer.cls_token_id for f in features)


def test_training_examples_hold_out_whole_articles_then_add_negatives_to_each_part():
    from rcqa.negatives import PERTURBATIONS, negative_kind
    from rcqa.train import training_examples

    training, held_out = training_examples(TrainConfig(negatives=1 / 3, held_out_articles=2, seed=0), ANSWERED)
    assert len({e.title for e in held_out}) == 2 and not {e.title for e in training} & {e.title for e in held_out}
    answerable = [e for e in training if not e.is_impossible]
    # at most one per source question, a third of all at most (fewer where a question can give no negative)
    assert 0 < len(training) - len(answerable) <= round(len(answerable) / 2)
    assert any(e.is_impossible for e in held_out)
    # the recipe's mix: question perturbations among the negatives of both parts, their passages unchanged
    training, held_out = training_examples(TrainConfig(negatives=1 / 3, in_context=0.0, perturbed=1.0,
                                                       held_out_articles=2, seed=0), ANSWERED)
    passages = {e.id: e.passage for e in ANSWERED}
    perturbations = [e for e in training + held_out if negative_kind(e.id) in PERTURBATIONS]
    assert perturbations and all(e.passage == passages[e.id.rsplit("-neg-", 1)[0]] for e in perturbations)
    plain, none = training_examples(TrainConfig(limit=3), ANSWERED)
    assert plain == ANSWERED[:3] and none == []


def test_train_with_negatives_smoke_and_the_recipe_on_the_command_line(tmp_path, tiny_model_dirs, monkeypatch,
                                                                       capsys):
    from rcqa import train as train_module
    from rcqa.cli import main

    calls = []
    monkeypatch.setattr(train_module, "train", lambda config, examples, base, device, prepare_only: calls.append((config, base)) or base)
    squad = tmp_path / "train.json"
    squad.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"context": ANSWERED[0].passage, "qas": [
        {"id": "1", "question": ANSWERED[0].question,
         "answers": [{"text": a.text, "answer_start": a.start_char} for a in ANSWERED[0].answers]}]}]}]}))
    assert main(["train", "--recipe", "squad2", "--data", str(squad), "--epochs", "0.25"]) == 0
    config, base = calls[-1]
    assert (config.negatives, config.epochs, config.held_out_articles, config.output_dir) == (1 / 3, 0.25, 20,
                                                                                               "runs/squad2")
    assert str(base).endswith("default_model")
    assert (config.in_context, config.perturbed) == (1 / 3, 1 / 3)  # a third of the negatives each
    assert main(["train", "--recipe", "squad2", "--data", str(squad), "--perturbed", "0.5", "--in-context", "0"]) == 0
    assert (calls[-1][0].in_context, calls[-1][0].perturbed) == (0.0, 0.5)
    assert config.recipe == "squad2" and calls[-1][0].recipe == "squad2"  # recorded for the card's command
    # the second stage continues the first's model, which has no default place: without it, one sentence
    assert main(["train", "--recipe", "squad2-hard", "--data", str(squad)]) == 2
    assert capsys.readouterr().err == ("error: --recipe squad2-hard continues the squad2 recipe's model "
                                       "(runs/squad2/final): give it with --base-model.\n")
    assert main(["train", "--recipe", "squad2-hard", "--data", str(squad), "--base-model", "stage1"]) == 0
    config, base = calls[-1]
    assert (base, config.recipe, config.epochs, config.keep_every) == ("stage1", "squad2-hard", 0.2, 300)
    assert (config.negatives, config.in_context, config.perturbed, config.held_out_articles, config.seed) == (
        1 / 3, 1 / 3, 1 / 3, 20, 0)  # the first stage's mix and held-out articles: no held-out question trained on
    # the third stage starts from the embedded default-squad2, on a mix half perturbations, the same held-out articles
    assert main(["train", "--recipe", "squad2-lexicon", "--data", str(squad)]) == 0
    config, base = calls[-1]
    assert str(base).endswith("default_squad2_model") and config.output_dir == "runs/squad2-lexicon"
    assert (config.negatives, config.in_context, config.perturbed, config.held_out_articles, config.seed,
            config.learning_rate) == (1 / 3, 1 / 4, 1 / 2, 20, 0, 3e-5)
    monkeypatch.undo()
    # a few real steps on a mixed set: the loop trains on [CLS] labels too, and the held-out file is written
    config = TrainConfig(output_dir=str(tmp_path / "run"), max_len=64, doc_stride=16, batch_size=4, epochs=1.0,
                         negatives=1 / 3, held_out_articles=1, keep_every=2, checkpoint_every=100)
    train(config, ANSWERED, tiny_model_dirs["bert"])
    recorded = json.loads((tmp_path / "run" / "train_config.json").read_text())
    assert recorded["negatives"] == pytest.approx(1 / 3) and recorded["total_steps"] >= 2
    assert (tmp_path / "run" / "step-2" / "config.json").is_file()
    held = load_examples_from(tmp_path / "run" / "held_out-v2.json")
    assert held and len({e.title for e in held}) == 1


def test_a_resumed_run_reads_its_features_back_without_building_its_negatives_again(tmp_path, tiny_model_dirs,
                                                                                   monkeypatch):
    from rcqa import train as train_module

    config = TrainConfig(output_dir=str(tmp_path / "run"), max_len=64, doc_stride=16, batch_size=4, epochs=1.0,
                         negatives=1 / 3, held_out_articles=1, checkpoint_every=1)
    train(config, ANSWERED, tiny_model_dirs["bert"])
    started = json.loads((tmp_path / "run" / "train_config.json").read_text())
    built = json.loads((tmp_path / "run" / started["features_file"]).read_text())
    log = tmp_path / "run" / "train_log.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:1]))
    checkpoint = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)
    checkpoint["step"] = 1  # as if stopped after its first step
    torch.save(checkpoint, tmp_path / "run" / "checkpoint.pt")

    def refuse(*args):
        raise AssertionError("a resumed run built its negatives again")
    monkeypatch.setattr(train_module, "training_examples", refuse)
    read_back, collate = [], train_module.collate
    monkeypatch.setattr(train_module, "collate", lambda features, pad: read_back.extend(features) or collate(
        features, pad))
    train(config, ANSWERED, tiny_model_dirs["bert"])
    assert [json.loads(line)["step"] for line in log.read_text().splitlines()] == list(
        range(1, started["total_steps"] + 1))
    assert all(feature in built for feature in read_back) and read_back
    with pytest.raises(AssertionError, match="built its negatives again"):  # another mix is another run's data
        train(TrainConfig(**{**started_config(started), "negatives": 0.25}), ANSWERED, tiny_model_dirs["bert"])
    with pytest.raises(AssertionError, match="built its negatives again"):  # so is another data file
        train(config, ANSWERED[:-1], tiny_model_dirs["bert"])


def started_config(recorded: dict) -> dict:
    from dataclasses import fields
    return {f.name: recorded[f.name] for f in fields(TrainConfig)}


def load_examples_from(path):
    from rcqa.data import load_examples
    return load_examples(path)


RAN = []


class _Payload:
    """What a hostile checkpoint carries: unpickling it calls RAN.append."""

    def __reduce__(self):
        return RAN.append, ("code ran",)


def test_a_checkpoint_that_would_run_code_is_refused(tmp_path):
    from rcqa.train import _resume

    torch.save({"model": {}, "step": 3, "payload": _Payload()}, tmp_path / "checkpoint.pt")
    with pytest.raises(Exception, match="Weights only load failed"):
        _resume(tmp_path, None, None, None, torch.device("cpu"))
    assert RAN == []


def test_a_prepared_run_trains_elsewhere_from_its_recorded_features_under_other_optimiser_settings(
        tmp_path, tiny_model_dirs, monkeypatch):
    """--prepare-only builds the negatives and features and stops; the same folder then trains (on a GPU machine
    without spaCy, say) with another learning rate and length, reading them back: what decides the features is the
    data and the windows (FEATURE_FIELDS), not the optimiser."""
    from dataclasses import replace

    from rcqa import train as train_module
    from rcqa.train import FEATURE_FIELDS

    run = tmp_path / "run"
    prepared = TrainConfig(output_dir=str(run), max_len=64, doc_stride=16, batch_size=4, epochs=1.0,
                           negatives=1 / 3, held_out_articles=1, checkpoint_every=100)
    assert train(prepared, ANSWERED, tiny_model_dirs["bert"], device="cpu", prepare_only=True) == run
    recorded = json.loads((run / "train_config.json").read_text())
    features = json.loads((run / recorded["features_file"]).read_text())
    assert (run / "held_out-v2.json").is_file() and features and recorded["device"].startswith("cpu (")
    assert not (run / "checkpoint.pt").exists() and not (run / "final").exists()  # not one step taken

    def refuse(*args):
        raise AssertionError("the prepared run built its negatives again")
    monkeypatch.setattr(train_module, "training_examples", refuse)
    trained = replace(prepared, learning_rate=3e-5, epochs=2.0, keep_every=3)
    final = train(trained, ANSWERED, tiny_model_dirs["bert"], device="cpu")
    assert (final / "config.json").is_file() and (run / "step-3" / "config.json").is_file()
    assert json.loads((run / "train_config.json").read_text())["total_steps"] == 2 * math.ceil(len(features) / 4)
    for field in FEATURE_FIELDS:  # any of these is other data: built again, never read back
        changed = {"limit": 5, "negatives": 0.25, "in_context": 0.25, "perturbed": 0.5}.get(field)
        value = changed if changed is not None else getattr(prepared, field) + 1
        with pytest.raises(AssertionError, match="built its negatives again"):
            train(replace(prepared, **{field: value}), ANSWERED, tiny_model_dirs["bert"], device="cpu")


def test_a_device_that_is_not_here_is_refused_before_anything_is_built(tmp_path, tiny_model_dirs):
    from rcqa.model import ModelLoadError

    if torch.cuda.is_available():
        pytest.skip("CUDA is here")
    with pytest.raises(ModelLoadError, match="CUDA is not available"):
        train(TrainConfig(output_dir=str(tmp_path / "run")), ANSWERED, tiny_model_dirs["bert"], device="cuda")
    assert not any((tmp_path / "run").iterdir())
