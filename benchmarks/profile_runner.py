"""Where a dataset question's time goes (issue 58): the first N SQuAD v1.1 dev questions explained in this process
on one torch thread, as one of the runner's two workers does (rcqa.dataset.runner.explain_chunk in chunks of 8,
each chunk's rows written as a shard and its explanations kept), with the wall time of each stage summed by
wrapping the function the runner calls for it. What the runner adds beyond this (Dask's cluster start, the model
loads, moving chunks between processes) is `bench --runner`'s wall time less this profile's total per worker.

    python benchmarks/profile_runner.py --method attnlrp --questions 200

prints JSON: seconds per question for each stage, the total and the rest (what no stage covers)."""
from __future__ import annotations

import argparse
import functools
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import torch

from rcqa.attribution import explanation
from rcqa.attribution.layerwise import LAYERWISE_METHODS
from rcqa.attribution.lrp import relevance
from rcqa.data import load_examples
from rcqa.dataset import extras, rows, runner, store, throughput
from rcqa.resources import squad_file

SECONDS: dict[str, float] = defaultdict(float)


def timed(owner, name: str, stage: str) -> None:
    """Replace owner.name by itself, timed into SECONDS[stage]."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SECONDS[stage] += time.perf_counter() - started

    setattr(owner, name, wrapper)


def profile(method: str, questions: int, model: str) -> dict:
    torch.set_num_threads(1)  # a runner worker's share of 2 cores
    examples = load_examples(squad_file("dev"))[:questions]
    job = throughput.default_job(model, method)
    timed(explanation, "explained_targets", "answer: every window's forward, the span decoded")
    for registered in LAYERWISE_METHODS.values():
        timed(type(registered), "explain_layers", "explanation: the method's passes")
    timed(relevance, "_rule_model", "of which AttnLRP's rule copy (made once per thread)")
    timed(rows, "example_row", "row: the per-layer analyses")
    timed(extras, "extra_cells", "row: the analyses every run adds (rcqa.dataset.extras)")
    timed(store, "write_shard", "shard written")
    timed(store.ResultCache, "put", "explanation kept")
    runner.explain_chunk(job, examples[:1])  # the model loaded and warmed, outside the count
    SECONDS.clear()
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / store.SHARDS).mkdir()
        kept = store.results(Path(folder))
        started = time.perf_counter()
        for first in range(0, len(examples), runner.MAX_CHUNK):
            found, _, results = runner.explain_chunk(job, examples[first:first + runner.MAX_CHUNK])
            store.write_shard(Path(folder), found)
            for key, result in results:
                kept.put(key, result)
        total = time.perf_counter() - started
    stages = {stage: round(seconds / len(examples), 4) for stage, seconds in SECONDS.items()}
    top = sum(seconds for stage, seconds in SECONDS.items() if not stage.startswith("of which"))
    return {"method": method, "questions": len(examples), "torch_threads": 1, "seconds_per_question": stages,
            "total_per_question": round(total / len(examples), 4),
            "rest_per_question": round((total - top) / len(examples), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="attnlrp", choices=LAYERWISE_METHODS)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    print(json.dumps(profile(args.method, args.questions, args.model), indent=2))


if __name__ == "__main__":
    main()
