"""Interventions: knock-outs and skipped blocks checked against a hooked copy of the model and a model without the
block, read by hand; k = 0 changes nothing; seeded draws; the shared model untouched; the intervene verb's JSON."""
import copy
import json

import numpy as np
import pytest
import torch

from rcqa.analysis.words import passage_distribution
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.cli import main
from rcqa.gallery import gallery_example
from rcqa.lens.interventions import intervene, intervention_row, random_words
from rcqa.model import load_model
from rcqa.qa import answer
from tests.helpers.lens_reference import answer_probabilities, one_window
from tests.helpers.reference import layer_module

FAST = ExplainSettings(steps=4, tolerance=None)


@pytest.fixture(scope="module")
def explained(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    return qa_model, explain(qa_model, gallery_example("lighthouse-when"), FAST)


def answers_by_hand(model, qa_model, example, replace_layer=None) -> dict[tuple[int, int], float]:
    """Every whole-word answer's probability from a plain forward of model, with replace_layer = (layer, tokens,
    states) swapping those tokens' states at that layer's output through a forward hook on model (a copy)."""
    inputs, offsets, passage_tokens = one_window(qa_model, example)
    handle = None
    if replace_layer:
        layer, tokens, states = replace_layer

        def swap(module, args, output):
            output = output.clone()
            output[0, tokens] = states[tokens]
            return output

        handle = layer_module(model, layer).register_forward_hook(swap)
    with torch.no_grad():
        output = model(**inputs)
    if handle:
        handle.remove()
    return answer_probabilities(output.start_logits[0].double().numpy(), output.end_logits[0].double().numpy(),
                                offsets, passage_tokens, example.passage)


def assert_reads(outcome, answers: dict, span: tuple[int, int], passage: str) -> bool:
    """The outcome holds the span's probability and the best answer by hand; returns whether the answer flipped."""
    best = max(answers, key=answers.get)
    assert outcome.span_probability == pytest.approx(answers.get(span, 0.0), rel=1e-4, abs=1e-9)
    assert outcome.answer == passage[best[0]:best[1]] and outcome.flipped == (best != span)
    return outcome.flipped


def test_knocking_out_no_words_changes_nothing(explained):
    qa_model, result = explained
    found = intervene(qa_model, result, k=0, draws=3)
    unchanged = found.unchanged.span_probability
    for layer in found.layers:
        for outcome in (layer.topk, layer.bottomk, *layer.random):
            assert outcome.words == ()
            assert outcome.span_probability == pytest.approx(unchanged, abs=1e-6)
            assert not outcome.flipped


def test_with_nothing_changed_the_window_reads_the_models_own_answer(explained):
    qa_model, result = explained
    own = answer(qa_model, result.example.passage, result.example.question)
    found = intervene(qa_model, result, k=2, draws=2)
    assert found.unchanged.answer == own.text and not found.unchanged.flipped
    assert found.unchanged.span_probability == pytest.approx(own.best.probability, rel=1e-6)  # one window


@pytest.mark.parametrize("baseline, outside_span", [("pad", True), ("zero", True), ("pad", False)])
def test_a_knockout_equals_a_forward_with_those_words_states_replaced(explained, baseline, outside_span):
    qa_model, result = explained
    example, best = result.example, result.answer.best
    k, draws = 3, 2
    found = intervene(qa_model, result, k=k, draws=draws, baseline=baseline, seed=4, outside_span=outside_span)
    distribution = passage_distribution(result, "l2")
    words = result.passage_words()
    in_span = {i for i, w in enumerate(words) if w.start_char < best.end_char and best.start_char < w.end_char}
    assert in_span and found.settings.outside_span is outside_span
    candidates = [i for i in range(len(words)) if not (outside_span and i in in_span)]
    model = copy.deepcopy(qa_model.model)
    inputs, _, _ = one_window(qa_model, example)
    ids = inputs["input_ids"]
    special = torch.isin(ids, torch.tensor(qa_model.tokenizer.all_special_ids))
    with torch.no_grad():
        pad_states = model(**{**inputs, "input_ids": torch.where(special, ids, qa_model.tokenizer.pad_token_id)},
                           output_hidden_states=True).hidden_states
    flips = []
    for layer, knocked in enumerate(found.layers):
        order = sorted(candidates, key=lambda i: -distribution[layer, i])  # best first, by hand
        top = [i for i in order[:k] if distribution[layer, i] > 0]
        randoms = random_words(np.array(candidates), k, draws, 4, layer)
        assert all(set(draw) <= set(candidates) for draw in randoms)
        chosen = [(knocked.topk, top), (knocked.bottomk, order[-k:]), *zip(knocked.random, randoms)]
        assert knocked.topk.words == tuple(words[i].text for i in top)
        # each word's signed score: its tokens' attributions summed over the hidden dims, then over its tokens
        signed = [float(result.layer_scores("sum")[layer, list(words[i].tokens)].sum()) for i in top]
        assert knocked.topk.signed_scores == pytest.approx(signed, rel=1e-5)
        assert set(knocked.bottomk.words) == {words[i].text for i in order[-k:]}
        states = pad_states[layer][0] if baseline == "pad" else torch.zeros_like(pad_states[layer][0])
        for outcome, indices in chosen:
            tokens = [t for i in indices for t in words[i].tokens]
            answers = answers_by_hand(model, qa_model, example, (layer, tokens, states))
            flips.append(assert_reads(outcome, answers, (best.start_char, best.end_char), example.passage))
    assert any(flips) or outside_span  # with the span's own words knocked out, both kinds of outcome were checked
    assert not all(flips)


def test_skipping_a_block_equals_a_model_without_it(explained):
    qa_model, result = explained
    example, best = result.example, result.answer.best
    found = intervene(qa_model, result, k=1, draws=1)
    assert found.layers[0].skip_block is None  # the embeddings are no block's output
    for block in range(qa_model.num_layers):
        model = copy.deepcopy(qa_model.model)
        kept = [b for i, b in enumerate(model.bert.encoder.layer) if i != block]
        model.bert.encoder.layer = torch.nn.ModuleList(kept)
        answers = answers_by_hand(model, qa_model, example)
        assert_reads(found.layers[block + 1].skip_block, answers, (best.start_char, best.end_char), example.passage)


def test_random_draws_are_reproducible_by_seed(explained):
    first, again, other = (random_words(np.arange(40), 5, 6, seed, layer=2) for seed in (7, 7, 8))
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))
    assert all(len(set(draw)) == 5 and draw.min() >= 0 and draw.max() < 40 for draw in first)
    assert [len(d) for d in random_words(np.arange(3), 5, 2, 0, layer=0)] == [3, 3]  # fewer words than k: all of them
    qa_model, result = explained
    assert intervene(qa_model, result, draws=5, seed=1).to_dict() == intervene(qa_model, result, draws=5, seed=1).to_dict()


def test_the_shared_model_is_left_as_it_was(explained):
    qa_model, result = explained
    def hooks():  # transformers may keep hooks of its own (it records output_hidden_states with them)
        return [(dict(m._forward_hooks), dict(m._forward_pre_hooks)) for m in qa_model.model.modules()]

    before, hooked = {name: tensor.clone() for name, tensor in qa_model.model.state_dict().items()}, hooks()
    intervene(qa_model, result, k=2, draws=2, baseline="zero")
    after = qa_model.model.state_dict()
    assert all(torch.equal(before[name], after[name]) for name in before)
    assert hooks() == hooked


def test_a_result_of_another_model_is_refused(explained, tiny_model_dirs):
    _, result = explained
    with pytest.raises(ValueError, match="explain it with this model first"):
        intervene(load_model(tiny_model_dirs["electra"]), result)


def test_the_intervene_verb_writes_the_documented_json(capsys, tmp_path, tiny_model_dirs):
    example = gallery_example("comet-who")
    passage, out = tmp_path / "passage.txt", tmp_path / "interventions.json"
    passage.write_text(example.passage)
    assert main(["intervene", "--passage-file", str(passage), "--question", example.question, "--json", str(out),
                 "--model", tiny_model_dirs["bert"], "--k", "2", "--draws", "3", "--baseline", "zero",
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    document = json.loads(out.read_text())
    assert document["settings"] == {"k": 2, "draws": 3, "seed": 0, "baseline": "zero", "aggregation": "l2",
                                    "target": "span_log_prob", "outside_span": True}
    layers = document["layers"]
    assert [layer["label"] for layer in layers] == ["embeddings", "block 0", "block 1", "block 2"]
    outcome_keys = {"words", "signed_scores", "span_probability", "drop", "flipped", "answer"}
    unchanged = document["unchanged"]["span_probability"]
    for layer in layers:
        assert set(layer["topk"]) == set(layer["bottomk"]) == outcome_keys and len(layer["topk"]["words"]) == 2
        assert layer["topk"]["drop"] == pytest.approx(unchanged - layer["topk"]["span_probability"])
        random = layer["random"]
        draws = [d["span_probability"] for d in random["draws"]]
        assert len(draws) == 3 and random["span_probability_mean"] == pytest.approx(np.mean(draws))
        assert random["span_probability_std"] == pytest.approx(np.std(draws))
        assert random["flip_rate"] == pytest.approx(np.mean([d["flipped"] for d in random["draws"]]))
        assert (layer["skip_block"] is None) == (layer["label"] == "embeddings")
    assert set(layers[1]["skip_block"]) == outcome_keys


def test_the_dataset_row_lists_every_layer(explained):
    qa_model, result = explained
    found = intervene(qa_model, result, k=2, draws=3)
    row = intervention_row(found)
    assert json.loads(json.dumps(row)) == row
    assert row["knockout_topk_probability"] == [layer.topk.span_probability for layer in found.layers]
    assert row["knockout_random_flip_rate"] == [np.mean([d.flipped for d in layer.random]) for layer in found.layers]
    assert row["skip_block_flipped"][0] is None and len(row["skip_block_probability"]) == qa_model.num_layers + 1
