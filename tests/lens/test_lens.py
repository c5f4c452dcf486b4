"""The answer lens: the head's and the probes' answers per layer, checked against a plain forward and softmaxes done
by hand; probes that learn a known rule; probes kept per model fingerprint; the lens and probes verbs' JSON."""
import json
import shutil
from dataclasses import replace

import numpy as np
import pytest
import torch

from rcqa.cli import main
from rcqa.gallery import gallery_example
from rcqa.lens import (
    Probes,
    ProbesUnavailable,
    answer_lens,
    find_probes,
    lens_row,
    read_layers,
)
from rcqa.lens.probes import fit_probe
from rcqa.model import load_model
from rcqa.qa import answer
from tests.helpers.lens_reference import (
    answer_probabilities,
    hidden_states,
    one_window,
    standing,
)

READING_KEYS = {"span", "start_char", "end_char", "probability", "final_answer_rank", "final_answer_probability",
                "em", "f1"}


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """Probes trained by a test go to a cache of their own."""
    monkeypatch.setenv("RCQA_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def random_probes(qa_model, seed: int = 0) -> Probes:
    generator = torch.Generator().manual_seed(seed)
    shape = (qa_model.num_layers + 1, 2, qa_model.config.hidden_size)
    return Probes(torch.randn(shape, generator=generator), qa_model.fingerprint)


def doubled(example):
    return replace(example, passage=f"{example.passage} {example.passage}")


@pytest.mark.parametrize("example", [gallery_example("comet-who"), gallery_example("canal-long"),
                                     doubled(gallery_example("canal-long"))], ids=["1", "9", "18"])  # windows
def test_the_head_at_the_last_layer_reads_the_models_own_answer_exactly(tiny_model_dirs, example):
    qa_model = load_model(tiny_model_dirs["bert"])
    lens = read_layers(qa_model, example, random_probes(qa_model))
    own = answer(qa_model, example.passage, example.question)
    last = lens.readings["head"][-1]
    assert last.span == own.best  # the same text, characters, window, tokens, logits and probability
    assert (last.final_answer_rank, last.final_answer_probability) == (1, own.best.probability)
    assert len(lens.readings["head"]) == len(lens.readings["probe"]) == qa_model.num_layers + 1


def test_the_default_model_ships_its_probes_and_their_dev_scores_and_its_head_reads_its_answer():
    qa_model = load_model()
    probes = find_probes(qa_model)  # trained for exactly this model: the fingerprints match
    dev, layers = probes.report["dev"], qa_model.num_layers + 1
    assert dev["questions"] == 500 and probes.report["command"].startswith("python -m rcqa probes --model default")
    for reader in ("head", "probe"):
        assert len(dev[reader]["exact_match"]) == len(dev[reader]["f1"]) == layers
    assert dev["head"]["exact_match"][-1] == dev["model"]["exact_match"]  # the head's last layer is the model
    example = gallery_example("lighthouse-who")
    lens = answer_lens(qa_model, example)
    last = lens.readings["head"][-1]
    own = answer(qa_model, example.passage, example.question).best
    assert last.span == own and last.span.text == "Margaret Ellison"
    assert last.final_answer_rank == 1 and (last.em, last.f1) == (1.0, 1.0)
    assert len(lens.readings["probe"]) == layers and lens.note == ""


@pytest.mark.parametrize("reader", ["head", "probe"])
def test_every_layers_reading_matches_a_softmax_done_by_hand(tiny_model_dirs, reader):
    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("bridge-how-much")
    probes = random_probes(qa_model, seed=3)
    lens = read_layers(qa_model, example, probes)
    inputs, offsets, passage_tokens = one_window(qa_model, example)
    final = (lens.answer.best.start_char, lens.answer.best.end_char)
    head = qa_model.model.qa_outputs
    for layer, states in enumerate(hidden_states(qa_model.model, inputs)):
        if reader == "head":
            logits = states @ head.weight.double().numpy().T + head.bias.double().numpy()
        else:
            logits = states @ probes.weight[layer].double().numpy().T
        answers = answer_probabilities(logits[:, 0], logits[:, 1], offsets, passage_tokens, example.passage)
        best = max(answers, key=answers.get)
        reading = lens.readings[reader][layer]
        assert (reading.span.start_char, reading.span.end_char) == best, layer
        assert reading.probability == pytest.approx(answers[best], rel=1e-4)
        rank, probability = standing(answers, final)
        assert reading.final_answer_rank == rank
        assert reading.final_answer_probability == pytest.approx(probability, rel=1e-4, abs=1e-9)


def test_gold_answers_score_every_layer_and_rows_hold_the_readings(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    example = gallery_example("lighthouse-when")  # gold: 1872
    lens = read_layers(qa_model, example)
    for reading in lens.readings["head"]:
        exact = reading.span.text == "1872"
        assert reading.em == float(exact) and (reading.f1 == 1.0) == exact
    row = lens_row(lens)
    assert row["lens_head_span"] == [r.span.text for r in lens.readings["head"]]
    assert row["lens_probe_span"] is None  # no probes were given
    assert json.loads(json.dumps(row)) == row


def test_a_probe_recovers_a_known_linear_rule():
    rng = np.random.default_rng(0)
    dim, windows = 6, 400
    rule = rng.normal(size=(2, dim)) * 1.5  # the true start and end vectors
    lengths = rng.integers(10, 30, size=windows)
    states = rng.normal(size=(lengths.sum(), dim))
    window = np.repeat(np.arange(windows), lengths)
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    gold = np.zeros((windows, 2), dtype=int)
    for w in range(windows):  # gold tokens drawn from the rule's own softmax over the window
        logits = states[first[w]:first[w] + lengths[w]] @ rule.T
        for column in range(2):
            p = np.exp(logits[:, column] - logits[:, column].max())
            gold[w, column] = first[w] + rng.choice(lengths[w], p=p / p.sum())
    weight, _ = fit_probe(torch.tensor(states, dtype=torch.float32), torch.tensor(window), torch.tensor(gold[:, 0]),
                          torch.tensor(gold[:, 1]), l2=0.0)
    learned = weight.double().numpy()
    cosine = (learned * rule).sum(1) / np.linalg.norm(learned, axis=1) / np.linalg.norm(rule, axis=1)
    assert cosine.min() > 0.98
    assert np.abs(learned - rule).max() < 0.25 * np.abs(rule).max()


def test_probes_are_kept_per_model_and_stale_ones_are_refused(tiny_model_dirs, tmp_path, private_cache):
    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dirs["bert"], folder)
    qa_model = load_model(str(folder))
    with pytest.raises(ProbesUnavailable, match=f"python -m rcqa probes --model {folder}"):
        find_probes(qa_model)
    probes = random_probes(qa_model)
    probes.save(folder)
    found = find_probes(qa_model)
    assert found.fingerprint == qa_model.fingerprint and torch.equal(found.weight, probes.weight)
    Probes(probes.weight, "0123456789abcdef").save(folder)  # probes of another model, beside this one
    with pytest.raises(ProbesUnavailable, match="belongs to model 0123456789abcdef"):
        find_probes(qa_model)
    lens = answer_lens(qa_model, gallery_example("comet-who"))
    assert "probe" not in lens.readings and "belongs to model 0123456789abcdef" in lens.note
    assert all(layer["probe"] is None for layer in lens.to_dict()["layers"])


def squad_file(path, example_ids: list[str]):
    paragraphs = [{"context": e.passage, "qas": [{"id": e.id, "question": e.question, "answers": [
        {"text": a.text, "answer_start": a.start_char} for a in e.answers]}]}
        for e in map(gallery_example, example_ids)]
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": paragraphs}]}))
    return path


def test_the_probes_verb_trains_and_caches_probes_that_the_lens_verb_reads(capsys, tmp_path, tiny_model_dirs,
                                                                          private_cache):
    ids = ["lighthouse-who", "lighthouse-when", "orchard-how-many", "bridge-how-much", "comet-who", "bakery-where",
           "river-where", "choir-how-many", "marathon-who", "vaccine-what"]
    data = squad_file(tmp_path / "squad.json", ids)
    model = tiny_model_dirs["bert"]
    assert main(["probes", "--model", model, "--data", str(data), "--dev-data", str(data), "--examples", "8",
                 "--dev", "10"]) == 0
    qa_model = load_model(model)
    report = json.loads((private_cache / "probes" / qa_model.fingerprint / "probes.json").read_text())
    layers = qa_model.num_layers + 1
    assert report["fingerprint"] == qa_model.fingerprint and report["training"]["questions"] == 8
    assert report["dev"]["questions"] == 10
    for reader in ("head", "probe"):
        assert len(report["dev"][reader]["exact_match"]) == len(report["dev"][reader]["f1"]) == layers
    assert report["command"].startswith(f"python -m rcqa probes --model {model} --examples 8")
    out_text = capsys.readouterr().out
    assert "probe EM / F1" in out_text and "embeddings" in out_text

    example = gallery_example("lighthouse-when")
    passage, out = tmp_path / "passage.txt", tmp_path / "lens.json"
    passage.write_text(example.passage)
    assert main(["lens", "--passage-file", str(passage), "--question", example.question, "--json", str(out),
                 "--model", model, "--gold", "1872"]) == 0
    document = json.loads(out.read_text())
    assert len(document["layers"]) == layers
    assert [layer["layer"] for layer in document["layers"]] == list(range(layers))
    assert document["layers"][0]["label"] == "embeddings"
    for layer in document["layers"]:
        assert set(layer["head"]) == set(layer["probe"]) == READING_KEYS
    assert document["layers"][-1]["head"]["final_answer_rank"] == 1
    assert document["layers"][-1]["head"]["span"] == document["final_answer"]["span"]
    assert document["probes"]["fingerprint"] == qa_model.fingerprint and document["probe_note"] is None
