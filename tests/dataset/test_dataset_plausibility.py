"""A run's plausibility over its questions (issue 55): the shares and IoU means of hand-written rows, each worked out
on paper, with the interval scipy's bootstrap gives; the table shows them beside DynamicLRP's published figures."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from scipy.stats import bootstrap

from rcqa.analysis.plausibility import COLUMNS
from rcqa.dataset import store
from rcqa.dataset.plausibility import last_layer_table, summary

LAYERS = ["embeddings", "block 0"]
# per question, magnitude's top1_predicted and iou_predicted at the two layers; every other measure left undefined
TOP1 = {"a": [1.0, 1.0], "b": [0.0, 1.0], "c": [None, 0.0], "d": [1.0, 1.0]}
IOU = {"a": [0.5, 1.0], "b": [0.0, 0.25], "c": [None, 0.0], "d": [1.0, 1.0]}


def write_plausibility_run(folder):
    (folder / store.SHARDS).mkdir(parents=True)
    rows = [{"id": id, "layers": LAYERS,
             **{column: [None, None] for column in COLUMNS},
             "plausibility_magnitude_top1_predicted": TOP1[id], "plausibility_magnitude_iou_predicted": IOU[id]}
            for id in TOP1]
    pq.write_table(pa.Table.from_pylist(rows), folder / store.SHARDS / "part-1.parquet")


def test_the_shares_by_hand_with_the_bootstrap_interval(tmp_path):
    write_plausibility_run(tmp_path / "run")
    found = summary(tmp_path / "run")["magnitude"]
    # embeddings: a, b, d define it (c's layer scored nothing): 2 of 3; block 0: 3 of 4
    assert [layer["mean"] for layer in found["top1_predicted"]] == [2 / 3, 3 / 4]
    assert [layer["n"] for layer in found["top1_predicted"]] == [3, 4]
    assert found["iou_predicted"][1]["mean"] == (1.0 + 0.25 + 0.0 + 1.0) / 4
    reference = bootstrap((np.array([1.0, 0.25, 0.0, 1.0]),), np.mean, confidence_level=0.95, method="percentile",
                          n_resamples=10_000, random_state=0).confidence_interval
    assert abs(found["iou_predicted"][1]["low"] - reference.low) < 0.05
    assert abs(found["iou_predicted"][1]["high"] - reference.high) < 0.05
    assert all(layer["mean"] is None for layer in found["top1_gold"])


def test_the_last_layer_table_beside_the_published_figures(tmp_path):
    write_plausibility_run(tmp_path / "run")
    table = last_layer_table({"hand": summary(tmp_path / "run")}).splitlines()
    hand = next(line for line in table if line.startswith("| hand | magnitude |"))
    cells = [cell.strip() for cell in hand.strip("|").split("|")]
    assert cells[2].startswith("75.0 [") and cells[3] == "undefined" and cells[5].startswith("56.2 [")
    assert "| DynamicLRP (RoBERTa-large) | published | 97.5 | 93.7 |  | 92.7 |  |" in table
