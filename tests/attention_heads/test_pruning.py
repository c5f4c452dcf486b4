"""The pruning curve and the dataset's head scores: the removal order and the heads spared worked out by hand; F1
with no head removed is the plain model's, and with every head removed the F1 of a deep copy whose attention output
projections are zeroed (rcqa.evaluate's official rules on both); `reproduce --heads` stores each question's scores,
the summary's means are their means, and `prune-heads` writes its documented JSON."""
import copy
import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from rcqa.attention_heads import (HEAD_SCORES, RANDOM, heads_spared, layout_for, pruning_curve, removal_order,
                                  score_heads)
from rcqa.attention_heads.pruning import f1_with_heads_removed
from rcqa.dataset.heads import cells_of, importance, record, summarize_heads
from rcqa.evaluate import evaluate
from rcqa.gallery import gallery_example
from rcqa.qa import answer
from tests.helpers.scaled_models import scaled_copy

CHOSEN = ("comet-who", "lighthouse-who", "orchard-how-many")


def test_the_least_important_head_goes_first_and_the_spared_count_reads_the_curve():
    assert removal_order(np.array([[0.3, -0.1], [0.2, 0.0]])) == [(0, 1), (1, 1), (1, 0), (0, 0)]
    assert removal_order(np.array([[1.0, 1.0]])) == [(0, 0), (0, 1)]  # a tie keeps the grid's order
    # within 1 point of 80.0: 79.5 at 4 heads, then 78.5 at 8 (out), 79.2 at 12 (back within): the most is 12
    assert heads_spared([80.0, 79.5, 78.5, 79.2, 60.0], [0, 4, 8, 12, 16]) == 12


def test_each_set_of_heads_is_measured_once_whatever_orders_share_it(monkeypatch):
    import rcqa.attention_heads.pruning as pruning
    from types import SimpleNamespace

    measured = []
    monkeypatch.setattr(pruning, "f1_with_heads_removed",
                        lambda qa_model, layout, examples, removed: measured.append(frozenset(removed)) or 100.0 - len(removed))
    # 1 layer of 4 heads; two scores that agree on the first two heads to go ((0, 0), (0, 1)) and differ after
    importance = {"a": np.array([[0.1, 0.2, 0.3, 0.4]]), "b": np.array([[0.1, 0.2, 0.4, 0.3]])}
    curves = pruning_curve(None, SimpleNamespace(layers=1, heads=4), [], importance, [0, 2, 3, 4], seed=0)
    assert curves["a"] == curves["b"] == [100.0, 98.0, 97.0, 96.0] and set(curves) == {"a", "b", RANDOM}
    assert len(measured) == len(set(measured))  # none twice
    # none, all four, {0, 1} (a's and b's first two), a's and b's different first three, and the random order's
    # first two and three where they are new
    random_sets = {frozenset(pruning.random_order(1, 4, 0)[:count]) for count in (2, 3)}
    assert set(measured) == {frozenset(), frozenset((0, h) for h in range(4)), frozenset({(0, 0), (0, 1)}),
                             frozenset({(0, 0), (0, 1), (0, 2)}), frozenset({(0, 0), (0, 1), (0, 3)}), *random_sets}


def test_several_random_orders_are_each_their_seeds_and_named_apart(monkeypatch):
    import rcqa.attention_heads.pruning as pruning
    from types import SimpleNamespace

    measured = []
    monkeypatch.setattr(pruning, "f1_with_heads_removed",
                        lambda qa_model, layout, examples, removed: measured.append(frozenset(removed)) or 0.0)
    layout = SimpleNamespace(layers=2, heads=4)
    curves = pruning_curve(None, layout, [], {}, [0, 3, 8], seed=5, random_orders=3)
    assert list(curves) == [RANDOM, "random:6", "random:7"]
    expected = {frozenset(np.random.default_rng(seed).permutation(8)[:3].tolist()) for seed in (5, 6, 7)}
    drawn = {frozenset(layer * 4 + head for layer, head in removed) for removed in measured if len(removed) == 3}
    assert drawn == expected  # the first three heads of each seed's permutation
    assert len(measured) == len(set(measured))


def plain_f1(qa_model, examples):
    return evaluate(examples, lambda e: answer(qa_model, e.passage, e.question, n_best=1, allow_null=False).best.text)["f1"]


def test_no_head_removed_is_the_model_and_every_head_removed_is_its_projections_zeroed(tiny_model_dirs,
                                                                                      tmp_path_factory):
    qa_model = scaled_copy(tiny_model_dirs["bert"], tmp_path_factory.mktemp("prune") / "bert")
    examples = [gallery_example(name) for name in CHOSEN]
    layout = layout_for(qa_model, examples[0])
    assert f1_with_heads_removed(qa_model, layout, examples, []) == pytest.approx(plain_f1(qa_model, examples))
    zeroed = copy.deepcopy(qa_model.model)
    with torch.no_grad():
        for name, module in zeroed.named_modules():
            if name.endswith("attention.output.dense"):
                module.weight.zero_()
    everything = [(layer, head) for layer in range(layout.layers) for head in range(layout.heads)]
    assert f1_with_heads_removed(qa_model, layout, examples, everything) == pytest.approx(
        plain_f1(replace(qa_model, model=zeroed), examples))


def test_the_curve_starts_at_the_models_f1_for_every_order(tiny_model_dirs, tmp_path_factory):
    qa_model = scaled_copy(tiny_model_dirs["bert"], tmp_path_factory.mktemp("prune") / "bert")
    examples = [gallery_example(name) for name in CHOSEN]
    layout = layout_for(qa_model, examples[0])
    curves = pruning_curve(qa_model, layout, examples, {"gradient": np.arange(6.0).reshape(3, 2)}, [0, 2, 6])
    assert set(curves) == {"gradient", RANDOM}
    assert curves["gradient"][0] == curves[RANDOM][0] == pytest.approx(plain_f1(qa_model, examples))
    assert curves["gradient"][2] == curves[RANDOM][2]  # every head removed, in whatever order


def test_reproduce_heads_stores_each_questions_scores_and_prune_heads_writes_its_curve(tiny_model_dirs, tmp_path):
    from rcqa.cli import main
    from rcqa.dataset.aggregate import load_run
    from rcqa.model import load_model

    chosen = [gallery_example(name) for name in CHOSEN]
    paragraphs = [{"context": e.passage, "qas": [{"id": e.id, "question": e.question, "answers": [
        {"text": a.text, "answer_start": a.start_char} for a in e.answers]}]} for e in chosen]
    data, out = tmp_path / "squad.json", tmp_path / "run"
    data.write_text(json.dumps({"version": "1.1", "data": [{"title": "gallery", "paragraphs": paragraphs}]}))
    assert main(["reproduce", "--data", str(data), "--out", str(out), "--model", tiny_model_dirs["bert"],
                 "--heads"]) == 0
    cells = cells_of(load_run(out).rows)
    assert len(cells) == 3
    # the cell is the record of the example's own head scores
    qa_model = load_model(tiny_model_dirs["bert"])
    by_question = {json.dumps(cell["scores"]["gradient"]) for cell in cells}
    direct = json.loads(record(score_heads(qa_model, chosen[0])))
    assert json.dumps(direct["scores"]["gradient"]) in by_question
    summary = summarize_heads(load_run(out).rows)
    assert summary["n"] == 3 and summary["layers"] == ["block 0", "block 1", "block 2"]
    for name, means in importance(cells).items():
        np.testing.assert_allclose(summary["scores"][name]["mean"], means)
        np.testing.assert_allclose(means, np.mean([c["scores"][name] for c in cells], axis=0))
    assert main(["prune-heads", str(out), "--step", "3"]) == 0  # into the run: the report draws it
    found = json.loads((out / "pruning.json").read_text())
    assert found["counts"] == [0, 3, 6] and found["n"] == 3
    assert set(found["f1"]) == {*HEAD_SCORES, "knockout_drop", RANDOM}  # each score's order, and the knock-outs'
    assert len({curve[0] for curve in found["f1"].values()}) == 1
    assert all(found["spared"][name] in found["counts"] for name in found["f1"])

    # the report reads the curve and the scores: its sentence names each order's spared count, its grid the means
    assert main(["report", str(out), "--out", str(tmp_path / "report"), "--no-images"]) == 0
    page = (tmp_path / "report" / "report.html").read_text()
    assert "Which attention heads carry the answer?" in page
    assert ", ".join(f"{order} {count}" for order, count in found["spared"].items()) + ".</p>" in page
    grid = pd.read_csv(tmp_path / "report" / "tables" / "dataset-heads.csv")
    np.testing.assert_allclose(grid.mean_drop.to_numpy().reshape(3, 2), summary["scores"]["knockout_drop"]["mean"])
