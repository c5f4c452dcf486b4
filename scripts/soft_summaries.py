"""Soft comprehensiveness and soft sufficiency (rcqa.faithfulness.summaries.soft) of every compared entry over the
questions of a committed comparison run, without its deletions: each question is scored by every method as the run
scored it (IG read from a run's kept explanations, as `reproduce --faithfulness` reads it), and only the summaries'
own re-answers are made (a protocol that deletes nothing; the deletion summaries are the run's rows).

    python scripts/soft_summaries.py RUN KEPT OUT.json [--part I/N]

RUN: the run whose questions (its rows' ids) and protocol (draws, operator, spared answer) are taken; KEPT: a run
folder holding the kept IG explanations; OUT: per question id, per entry, each summary (random: the mean of its
draws). A part I/N takes every N-th question from the I-th, so N processes share the questions; OUT is written after
every question and read back on a rerun, which resumes."""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.methods import COMPARED
from rcqa.attribution.methods.layer_embeddings import ranked_scores
from rcqa.attribution.settings import resolve
from rcqa.data import load_examples
from rcqa.dataset import store
from rcqa.dataset.manifest import RunManifest
from rcqa.faithfulness.compare import Protocol, compare
from rcqa.faithfulness.report import measures
from rcqa.faithfulness.summaries import SUMMARIES
from rcqa.model import load_model
from rcqa.resources import squad_file

SOFT = [name for name, summary in SUMMARIES.items() if summary.variants]  # the summaries with re-answers of their own


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("kept", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--part", default="0/1")
    args = parser.parse_args(argv)
    part, parts = map(int, args.part.split("/"))
    manifest = RunManifest.from_dict(json.loads((args.run / "manifest.json").read_text()))
    analysis = manifest.analysis
    ids = sorted(pq.read_table(args.run / "shards", columns=["id"]).column("id").to_pylist())[part::parts]
    examples = {example.id: example for example in load_examples(squad_file("dev"))}
    settings = resolve(analysis.preset or "default")
    protocol = Protocol(k=0, fractions=(), bins=(), draws=analysis.draws or 5, spare_answer=bool(analysis.spare_answer),
                        operator=analysis.operator or "pad")
    qa_model = load_model(manifest.model.name)
    kept = store.results(args.kept, read_only=True)
    done = json.loads(args.out.read_text()) if args.out.is_file() else {}
    for number, question in enumerate(ids):
        if question in done:
            continue
        example = examples[question]
        result = kept.result_for(example, ResultCache.key(qa_model.fingerprint, example, settings))
        known = {} if result is None else {result.settings.method: ranked_scores(result.scores[0, :, 0])}
        comparison = compare(qa_model, example, COMPARED, protocol, settings, known)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no bins: ERASER's summaries are empty means here
            found = {name: measures(comparison, entry)["summaries"] for name, entry in comparison.methods.items()}
        done[question] = {name: {s: float(np.mean(values[s])) for s in SOFT} for name, values in found.items()}
        args.out.write_text(json.dumps(done, indent=1, sort_keys=True) + "\n")
        print(f"{number + 1}/{len(ids)} {question} (IG {'kept' if result else 'computed'})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
