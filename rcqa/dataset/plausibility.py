"""A run's plausibility (rcqa.analysis.plausibility) over its questions: per ranking, measure and layer, the share of
questions (or the mean IoU) with its 95 % bootstrap interval, read from the rows' plausibility columns; and a markdown
table of several runs at their last layer beside DynamicLRP's published figures (arXiv 2512.07010)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from rcqa.analysis.plausibility import MEASURES, RANKINGS
from rcqa.dataset import store
from rcqa.intervals import mean_with_interval

# DynamicLRP's table (SQuAD v2's answerable questions, RoBERTa-large, the last layer's token relevance): its own
# figures and those it quotes for AttnLRP; None where the paper gives none
PUBLISHED = {"DynamicLRP (RoBERTa-large)": {"top1_predicted": 0.975, "top1_gold": 0.937, "iou_predicted": 0.927},
             "AttnLRP, as DynamicLRP quotes it": {"top1_predicted": 0.94, "iou_predicted": 0.84}}
SHOWN = ("top1_predicted", "top1_gold", "top2_predicted", "iou_predicted", "top1_sentence")


def run_measures(folder: str | Path) -> dict[str, np.ndarray]:
    """column → (questions × layers) of the run's plausibility columns, NaN where undefined, rows in id order."""
    shards = sorted((Path(folder) / store.SHARDS).glob("*.parquet"))
    columns = [f"plausibility_{ranking}_{measure}" for ranking in RANKINGS for measure in MEASURES]
    table = pq.ParquetDataset(shards).read(columns=["id", *columns]).sort_by("id")
    return {column: np.array([[np.nan if v is None else v for v in row] for row in table.column(column).to_pylist()],
                             dtype=float) for column in columns}


def run_layers(folder: str | Path) -> list[str]:
    """The layer labels of the run's first row."""
    shard = sorted((Path(folder) / store.SHARDS).glob("*.parquet"))[0]
    return pq.read_table(shard, columns=["layers"]).column("layers")[0].as_py()


def summary(folder: str | Path, seed: int = 0) -> dict:
    """Per ranking and measure, per layer: the mean over the run's questions with its interval (mean_with_interval)."""
    measures = run_measures(folder)
    return {ranking: {measure: [mean_with_interval(layer, seed) for layer in measures[
        f"plausibility_{ranking}_{measure}"].T] for measure in MEASURES} for ranking in RANKINGS}


def cell(found: dict) -> str:
    if found["mean"] is None:
        return "undefined"
    return f"{100 * found['mean']:.1f} [{100 * found['low']:.1f}, {100 * found['high']:.1f}]"


def last_layer_table(summaries: dict[str, dict]) -> str:
    """A markdown table: each run's summary (by the label given) and ranking at its last layer, % with intervals,
    then the published rows."""
    header = "| method | ranking | " + " | ".join(SHOWN) + " |"
    lines = [header, "|" + "---|" * (len(SHOWN) + 2)]
    for label, found in summaries.items():
        for ranking in RANKINGS:
            lines.append(f"| {label} | {ranking} | " + " | ".join(cell(found[ranking][m][-1]) for m in SHOWN) + " |")
    for label, figures in PUBLISHED.items():
        shown = [f"{100 * figures[m]:.1f}" if m in figures else "" for m in SHOWN]
        lines.append(f"| {label} | published | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def layer_table(summaries: dict[str, dict], layers: list[str], measure: str = "top1_predicted",
                ranking: str = "magnitude") -> str:
    """A markdown table of one measure at every layer (columns, labelled `layers`), one row per run's summary, %
    with intervals."""
    lines = ["| method | " + " | ".join(layers) + " |", "|" + "---|" * (len(layers) + 1)]
    lines += [f"| {label} | " + " | ".join(cell(value) for value in found[ranking][measure]) + " |"
              for label, found in summaries.items()]
    return "\n".join(lines)


BEGIN, END = "<!-- plausibility:begin -->", "<!-- plausibility:end -->"


def section(runs: dict[str, str | Path]) -> str:
    """The findings' plausibility tables: every run at its last layer beside the published figures, then the top-1
    token in the predicted span and the top sentence holding the answer at every layer (by magnitude). Each run is
    read and summarised once."""
    summaries = {label: summary(folder) for label, folder in runs.items()}
    layers = run_layers(next(iter(runs.values())))
    return "\n\n".join([
        "At the last layer (%, 95 % bootstrap interval over the questions):", last_layer_table(summaries),
        "The top token inside the predicted span at every layer (by magnitude):", layer_table(summaries, layers),
        "The top sentence holding the predicted span at every layer (by magnitude):",
        layer_table(summaries, layers, "top1_sentence")])


def main(argv: list[str] | None = None) -> None:
    """python -m rcqa.dataset.plausibility LABEL=RUN ... [--write FILE]: the tables, printed, or written into FILE
    between its plausibility markers."""
    tables_main(argv, "python -m rcqa.dataset.plausibility", section, BEGIN, END)


def tables_main(argv: list[str] | None, prog: str, make: Callable[[dict[str, str | Path]], str], begin: str, end: str) -> None:
    """A findings table's command: LABEL=RUN ... [--write FILE], the text `make` gives for the runs, printed or
    written into FILE between its markers."""
    import argparse

    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("runs", nargs="+", metavar="LABEL=RUN")
    parser.add_argument("--write", type=Path, help="a markdown file holding the markers")
    args = parser.parse_args(argv)
    text = make({label: folder for label, folder in (run.split("=", 1) for run in args.runs)})
    if args.write is None:
        print(text)
    else:
        write_between(args.write, begin, end, text)


def write_between(path: Path, begin: str, end: str, text: str) -> None:
    """Replace what the markdown file holds between its `begin` and `end` markers by `text`."""
    document = path.read_text()
    if begin not in document or end not in document.split(begin, 1)[1]:
        raise SystemExit(f"{path} holds no {begin} … {end} markers to write between")
    before, _, rest = document.partition(begin)
    _, _, after = rest.partition(end)
    path.write_text(f"{before}{begin}\n{text}\n{end}{after}")


if __name__ == "__main__":
    main()
