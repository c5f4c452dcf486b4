"""One-off (issue 35): give the committed runs' rows their passage, gold answer starts and is_impossible, so that
the Dataset page opens their examples in Explore on a machine that never fetched SQuAD. Rows written since carry
them (rcqa.dataset.rows.example_columns); this adds them to shards written before, from the run's data file.

Checked: before a shard is written, every row's id, question, title and gold answer texts equal the data file's;
after, every explanation the run kept (results/) is found by the result-cache key of an example rebuilt from the new
rows (the key hashes the passage, the question and the gold answers). Each shard is replaced atomically; its other
columns are left as they were; a failed check leaves the shards for `git checkout` to restore. Run from the checkout's root:

    python -m scripts.backfill_run_examples reports/runs/*
"""
from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.settings import ExplainSettings
from rcqa.data import load_examples
from rcqa.dataset import store
from rcqa.dataset.aggregate import load_run, run_examples
from rcqa.dataset.rows import SCHEMA, example_columns
from rcqa.resources import squad_file
from rcqa.types import Example

ADDED = ("passage", "gold_starts", "is_impossible")


def data_examples(manifest: dict) -> dict[str, Example]:
    data = manifest["data"]
    path = squad_file("dev") if data.get("source") == "squad-dev" else Path(data["path"])
    return {example.id: example for example in load_examples(path)}


def backfilled(table: pa.Table, examples: dict[str, Example]) -> pa.Table:
    """The shard with the three columns after 'question', as SCHEMA orders them, checked against the data file."""
    rows = table.select(["id", "title", "question", "gold_answers"]).to_pylist()
    for row in rows:
        example = examples[row["id"]]
        if (row["question"], row["title"] or "", row["gold_answers"]) != (
                example.question, example.title, [a.text for a in example.answers]):
            raise SystemExit(f"row {row['id']} differs from the data file: not backfilled")
    columns = [example_columns(examples[row["id"]]) for row in rows]
    position = table.schema.get_field_index("question") + 1
    for offset, name in enumerate(ADDED):
        field = SCHEMA.field(name)
        table = table.add_column(position + offset, field, pa.array([c[name] for c in columns], type=field.type))
    return table


def check_keys(folder: Path, manifest: dict) -> int:
    """How many of the run's kept explanations a rebuilt example finds by its key: every one must be found (the
    run keeps some of its explanations, not all)."""
    analysis = manifest["analysis"]
    settings = ExplainSettings.from_dict({k: v for k, v in analysis["settings"].items() if k not in ("max_len", "doc_stride")})
    fingerprint = manifest["model"]["fingerprint"]
    keys = {ResultCache.key(fingerprint, example, settings) for example in run_examples(folder)}
    kept = {path.stem for path in (folder / store.RESULTS).glob("*.npz")}
    if kept - keys:
        raise SystemExit(f"{folder.name}: {len(kept - keys)} kept explanations match no rebuilt example")
    return len(kept)


def main(folders: list[str]) -> None:
    for folder in map(Path, folders):
        manifest = load_run(folder).manifest
        examples = data_examples(manifest)
        for shard in sorted((folder / store.SHARDS).glob("*.parquet")):
            table = pq.read_table(shard)
            if "passage" in table.schema.names:
                continue
            temporary = shard.with_name(f".{shard.name}.tmp")
            pq.write_table(backfilled(table, examples), temporary)
            temporary.replace(shard)
        print(f"{folder.name}: {len(run_examples(folder))} examples carried, {check_keys(folder, manifest)} "
              "kept explanations found by their key")


if __name__ == "__main__":
    main(sys.argv[1:])
