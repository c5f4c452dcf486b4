"""Dataset-level numbers of a run: averages over its rows with 95 % bootstrap intervals, per layer.

Every number here is a mean of per-example numbers that rcqa.analysis computed (and Explore shows one by one):
an undefined per-example value (a layer with no top words, a JSD involving no distribution) is left out of its
mean, never counted as 0. Intervals are scipy's percentile bootstrap over examples, seeded.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rcqa.analysis.pos import GROUPS
from rcqa.analysis.roles.categories import CATEGORIES
from rcqa.analysis.roles.result import ANSWER_MEASURES
from rcqa.analysis.similarity import VARIANTS
from rcqa.dataset import store
from rcqa.dataset.extras import EXTRAS
from rcqa.dataset.faithfulness import summarize_faithfulness
from rcqa.intervals import defined_means, mean_with_interval, nullable
from rcqa.dataset.layers import summarize_interventions, summarize_lens
from rcqa.dataset.heads import pruning_of, summarize_heads
from rcqa.dataset.manifest import RunManifest
from rcqa.dataset.sanity import summarize_sanity
from rcqa.dataset.summary import DatasetSummary
from rcqa.dataset.rows import QUESTION_TYPES, SENTENCE_COLUMNS
from rcqa.dataset.sentence_roles import summarize_sentences
from rcqa.types import Example, GoldAnswer

# the columns the aggregates read; the drill-down columns (words, distributions, top-k) stay on disk
SUMMARY_COLUMNS = ("id", "question", "question_type", "is_quantifier", "prediction", "gold_answers", "em", "f1",
                   "probability", "layers", "answer_pos", "quantifier_share", "completeness", "steps", "seconds",
                   *(f"category_{c}" for c in CATEGORIES), *ANSWER_MEASURES, *(f"pos_{g}" for g in GROUPS),
                   *(f"jsd_{v}" for v in VARIANTS))
# analyses a run may have added (reproduce --faithfulness --lens --interventions), and the abstention and sentence
# columns (with the passage the sentences are read in) that runs made before them lack
OPTIONAL_COLUMNS = (*EXTRAS, "abstained", "null_probability", "contrast", "passage", *SENTENCE_COLUMNS)


@dataclass(frozen=True)
class Run:
    """A run folder's manifest and its rows (the summary columns only)."""

    folder: Path
    manifest: RunManifest
    rows: pa.Table

    @property
    def name(self) -> str:
        return f"{self.folder.name} ({self.manifest.analysis.preset or 'custom'})"


def load_run(folder: str | Path) -> Run:
    """Read a run written by `python -m rcqa reproduce`; unreadable shards are skipped (the runner recomputes them)."""
    folder = Path(folder)
    manifest = store.read_manifest(folder)
    tables = []
    for shard in sorted((folder / store.SHARDS).glob("*.parquet")):
        try:
            tables.append(pq.read_table(shard, columns=[c for c in (*SUMMARY_COLUMNS, *OPTIONAL_COLUMNS)
                                                        if c in pq.read_schema(shard).names]))
        except (OSError, pa.ArrowException):
            continue
    rows = pa.concat_tables(tables, promote_options="default") if tables else _empty_rows()
    return Run(folder, manifest, rows.sort_by("id"))


EXAMPLE_COLUMNS = ("id", "title", "question", "passage", "gold_answers", "gold_starts", "is_impossible")


def run_examples(folder: str | Path) -> list[Example]:
    """The examples a run's rows carry (rows written before they carried their passage are left out)."""
    found: list[Example] = []
    for shard in sorted((Path(folder) / store.SHARDS).glob("*.parquet")):
        try:
            if "passage" not in pq.read_schema(shard).names:
                continue
            rows = pq.read_table(shard, columns=list(EXAMPLE_COLUMNS)).to_pylist()
        except (OSError, pa.ArrowException):
            continue
        found += [Example(id=row["id"], passage=row["passage"], question=row["question"], title=row["title"] or "",
                          answers=tuple(map(GoldAnswer, row["gold_answers"], row["gold_starts"])),
                          is_impossible=bool(row["is_impossible"]))
                  for row in rows if row["passage"] is not None]
    return sorted(found, key=lambda example: example.id)


def _empty_rows() -> pa.Table:
    from rcqa.dataset.rows import SCHEMA

    return SCHEMA.empty_table().select(list(SUMMARY_COLUMNS))


def select(rows: pa.Table, question_type: str | None = None, correct: bool | None = None,
           quantifier: bool | None = None, abstained: bool | None = None) -> pa.Table:
    """The rows of one question type, of right (EM = 1) or wrong answers, of quantifier questions or not, of
    questions the model abstained on or answered (a run without the column has neither)."""
    mask = pa.array([True] * rows.num_rows, type=pa.bool_())
    if question_type is not None:
        mask = pc.and_(mask, pc.equal(rows["question_type"], question_type))
    if correct is not None:
        mask = pc.and_(mask, pc.equal(rows["em"], 1.0 if correct else 0.0))
    if quantifier is not None:
        mask = pc.and_(mask, pc.equal(rows["is_quantifier"], quantifier))
    if abstained is not None:
        if "abstained" not in rows.column_names:
            return rows.slice(0, 0)
        mask = pc.and_(mask, pc.equal(rows["abstained"], abstained))
    return rows.filter(pc.fill_null(mask, False))


def has_abstentions(rows: pa.Table) -> bool:
    """Whether the model abstained on any of these rows (never for a run without the column)."""
    return "abstained" in rows.column_names and bool(pc.any(rows["abstained"]).as_py())


def by_abstention(run: Run, rows: pa.Table | None = None) -> dict[str, DatasetSummary]:
    """The summaries of the answered and of the abstained questions among the rows (all of the run's unless given),
    each present only when it has a row; empty for rows without any abstention."""
    rows = run.rows if rows is None else rows
    if not has_abstentions(rows):
        return {}
    parts = {name: select(rows, abstained=flag) for name, flag in (("answered", False), ("abstained", True))}
    return {name: summarize(run, part) for name, part in parts.items() if part.num_rows}


def per_layer(rows: pa.Table, column: str, n_layers: int | None = None) -> np.ndarray:
    """(examples × layers) values of a per-layer column, NaN where undefined; rows without the column's value
    (a non-quantifier question's quantifier share) are dropped. n_layers shapes the result when no row is left."""
    values = [v for v in rows[column].to_pylist() if v is not None]
    if not values:
        return np.empty((0, _layer_count(rows) if n_layers is None else n_layers))
    return np.array([[np.nan if x is None else x for x in v] for v in values], dtype=float)


def matrices(rows: pa.Table, column: str) -> np.ndarray:
    """(examples × layers × layers) of a matrix column, NaN where undefined."""
    values = rows[column].to_pylist()
    layers = _layer_count(rows)
    if not values:
        return np.empty((0, layers, layers))
    return np.array([[[np.nan if x is None else x for x in line] for line in m] for m in values], dtype=float)


def _layer_count(rows: pa.Table) -> int:
    layers = rows["layers"].to_pylist()
    return len(layers[0]) if layers else 0


def layer_means(table: np.ndarray, seed: int = 0) -> list[dict]:
    """Per layer (column), the mean of its defined values with an interval."""
    return [mean_with_interval(table[:, layer], seed + layer) for layer in range(table.shape[1])]


def off_diagonal_range(matrix: np.ndarray) -> dict:
    """The smallest and largest defined entry off the diagonal (the paper quotes these for its JSD maps)."""
    off = matrix[~np.eye(len(matrix), dtype=bool)] if len(matrix) else np.array([])
    off = off[~np.isnan(off)]
    return {"min": float(off.min()), "max": float(off.max())} if off.size else {"min": None, "max": None}


def scores(rows: pa.Table) -> dict:
    """EM and F1 (in %) over the rows that have gold answers."""
    em = np.array([x for x in rows["em"].to_pylist() if x is not None], dtype=float)
    f1 = np.array([x for x in rows["f1"].to_pylist() if x is not None], dtype=float)
    return {"n": int(em.size), "exact_match": 100 * float(em.mean()) if em.size else None,
            "f1": 100 * float(f1.mean()) if f1.size else None}


def summarize(run: Run, rows: pa.Table | None = None, seed: int = 0) -> DatasetSummary:
    """Every dataset-level analysis of the paper over a run's rows (all of them unless a selection is given)."""
    rows = run.rows if rows is None else rows
    layers = rows["layers"][0].as_py() if rows.num_rows else []
    roles = {c: layer_means(per_layer(rows, f"category_{c}"), seed) for c in CATEGORIES}
    # the answer's share of the attribution and its ceiling in the top-k, beside its share there: only where every
    # row holds them (a row written before them has none, and a mean over the newer rows alone would not be the run's)
    roles |= {name: layer_means(per_layer(rows, name, len(layers)), seed) for name in ANSWER_MEASURES
              if name in rows.column_names and not rows[name].null_count}
    pos = {g: layer_means(per_layer(rows, f"pos_{g}"), seed) for g in GROUPS}
    jsd = {v: defined_means(matrices(rows, f"jsd_{v}")) for v in VARIANTS}
    overall = scores(rows)
    seconds, per_hour = _throughput(run)
    return DatasetSummary(
        n=rows.num_rows, n_failed=len(run.manifest.failed),
        exact_match=overall["exact_match"], f1=overall["f1"], layers=layers,
        roles={c: [m["mean"] for m in means] for c, means in roles.items()},
        roles_ci={c: [[m["low"], m["high"]] for m in means] for c, means in roles.items()},
        jsd={v: nullable(m) for v, m in jsd.items()},
        jsd_range={v: off_diagonal_range(m) for v, m in jsd.items()},
        pos={g: [m["mean"] for m in means] for g, means in pos.items()},
        pos_ci={g: [[m["low"], m["high"]] for m in means] for g, means in pos.items()},
        answer_pos=_answer_pos(rows),
        quantifier=_quantifier(rows, len(layers), seed),
        question_types=_per_question_type(rows),
        completeness=_completeness(rows),
        faithfulness=summarize_faithfulness(rows, seed),
        lens=summarize_lens(rows),
        interventions=summarize_interventions(rows),
        sanity=summarize_sanity(rows, seed),
        heads=summarize_heads(rows, seed),
        pruning=pruning_of(run.folder),
        contrast=summarize_contrast(rows, seed),
        sentences=_sentences(rows, seed),
        n_skipped=len(run.manifest.skipped or ()),
        settings=run.manifest.analysis,
        model=run.manifest.model.name,
        fingerprint=run.manifest.model.fingerprint,
        data=run.manifest.data,
        seconds=seconds, examples_per_hour=per_hour,
    )


def summarize_contrast(rows: pa.Table, seed: int = 0) -> dict | None:
    """A contrast run's numbers: per layer, the shares (%) of answer, foil, supporting and query words and of the
    other numbers (neither the span's nor the foil's) in the contrast's top-k, with intervals; the lens's margin
    log p(answer) − log p(foil) and the share (%) of questions whose answer leads there; EM over its questions.
    None for a run without a contrast."""
    if "contrast" not in rows.column_names:
        return None
    kept = rows.filter(pc.invert(pc.is_null(rows["contrast"])))
    if not kept.num_rows:
        return None
    cells = [json.loads(cell) for cell in kept["contrast"].to_pylist()]
    tables = {c: per_layer(kept, f"category_{c}") for c in CATEGORIES}
    for name in ("foil", "other_numbers"):  # rows before the other numbers' share was kept have no such key
        found = [c[f"category_{name}"] for c in cells if c.get(f"category_{name}") is not None]
        if found:
            tables[name] = np.array([[np.nan if x is None else x for x in v] for v in found], dtype=float)
    shares = {c: layer_means(table, seed) for c, table in tables.items()}
    margins = np.array([c["lens_margin"] for c in cells], dtype=float)
    return {"n": kept.num_rows, "foil": cells[0]["foil"]["request"],
            "shares": {c: [m["mean"] for m in means] for c, means in shares.items()},
            "shares_ci": {c: [[m["low"], m["high"]] for m in means] for c, means in shares.items()},
            "lens_margin": margins.mean(axis=0).tolist(), "lens_ahead": (100 * (margins > 0).mean(axis=0)).tolist(),
            "exact_match": scores(kept)["exact_match"]}


def _sentences(rows: pa.Table, seed: int) -> dict | None:
    """The layer roles by sentence over the rows that keep their sentence scores (None where none does: the report
    reads an older run's word shares instead, rcqa.dataset.report)."""
    if "sentence_share" not in rows.column_names:
        return None
    return summarize_sentences(rows.select(["question", "passage", *SENTENCE_COLUMNS]).to_pylist(), seed)


def _per_question_type(rows: pa.Table) -> dict:
    """EM and F1 of each question type the rows hold."""
    chosen = {kind: select(rows, question_type=kind) for kind in QUESTION_TYPES}
    return {kind: scores(found) for kind, found in chosen.items() if found.num_rows}


def _answer_pos(rows: pa.Table) -> dict:
    """Per group, the mean % of the explained spans' words in it (spans holding no word are left out)."""
    spans = [s for s in rows["answer_pos"].to_pylist() if s is not None]
    return {g: float(np.mean([s[g] for s in spans])) if spans else None for g in GROUPS}


def _quantifier(rows: pa.Table, n_layers: int, seed: int) -> dict:
    """The paper's quantifier analysis: its questions' scores and confidence, and the ratio per layer."""
    questions = select(rows, quantifier=True)
    ratio = layer_means(per_layer(questions, "quantifier_share", n_layers), seed)
    confidence = [p for p in questions["probability"].to_pylist() if p is not None]
    return {"n_questions": questions.num_rows, **{k: v for k, v in scores(questions).items() if k != "n"},
            "confidence": 100 * float(np.mean(confidence)) if confidence else None,
            "n_with_ratio": ratio[0]["n"] if ratio else 0,
            "ratio": [m["mean"] for m in ratio], "ratio_ci": [[m["low"], m["high"]] for m in ratio]}


def _completeness(rows: pa.Table) -> dict:
    """Per layer, the median and largest relative completeness error, and the median path points."""
    errors, steps = per_layer(rows, "completeness"), per_layer(rows, "steps")
    if not errors.size:
        return {"median": [], "max": [], "median_steps": []}
    return {"median": np.nanmedian(errors, axis=0).tolist(), "max": np.nanmax(errors, axis=0).tolist(),
            "median_steps": np.median(steps, axis=0).tolist()}


def _throughput(run: Run) -> tuple[float, float | None]:
    """Wall-clock seconds the run's sessions took and the examples per hour they computed."""
    seconds, computed = 0.0, 0
    for session in run.manifest.runs:
        if session.finished:
            seconds += (dt.datetime.fromisoformat(session.finished)
                        - dt.datetime.fromisoformat(session.started)).total_seconds()
            computed += session.computed + session.failed
    return seconds, 3600 * computed / seconds if seconds else None
