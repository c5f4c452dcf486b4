"""Command line: python -m rcqa <verb> ... (every heavy computation, without the UI; `--help` lists the verbs)."""
from __future__ import annotations

import argparse
import sys

from rcqa.cli import abstention, analyze, app, bench, data, dataset, example, heads, model, sentences
from rcqa.cli.options import CliError

# in the order `--help` lists them
_VERBS = (app.add_app, example.add_answer, example.add_explain, analyze.add_analyze, example.add_faithfulness,
          sentences.add_sentence_check, bench.add_bench, model.add_evaluate, abstention.add_abstention_curve,
          dataset.add_reproduce, dataset.add_report, example.add_lens, example.add_intervene, heads.add_heads,
          heads.add_prune_heads, model.add_probes, model.add_train, model.add_negatives, model.add_export,
          data.add_data)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rcqa", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for add_verb in _VERBS:
        add_verb(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from rcqa.data import DataError
    from rcqa.model import ModelLoadError
    from rcqa.qa import InputError
    from rcqa.resources import ResourceError

    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (CliError, DataError, InputError, ModelLoadError, ResourceError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
