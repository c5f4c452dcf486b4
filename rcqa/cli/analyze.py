"""The `analyze` verb: one registered analysis (rcqa.analysis.registered) of an example's explanation, as JSON, one
sub-verb per analysis, each with the shared options and its own (registered here, by the analysis' name)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rcqa.analysis.registered import ANALYSES
from rcqa.analysis.registry import CliOptions, options_of, register_options
from rcqa.analysis.similarity import VARIANTS
from rcqa.cli.options import (add_aggregation, add_example, add_ig, add_model, add_result_cache, add_windows,
                              cli_example, explained, preset_settings)

register_options("similarity", CliOptions(
    lambda parser: parser.add_argument("--variant", choices=VARIANTS, action="append", dest="variants",
                                       help="a JSD variant to compute (repeatable; default: all)"),
    lambda args: {"variants": tuple(args.variants or VARIANTS)}))


def add_analyze(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("analyze", help="one analysis of the answer's explanation, as JSON (the analyses "
                                                  "`explain` gathers, and those it does not: agreement)")
    analyses = command.add_subparsers(dest="analysis", required=True, metavar="ANALYSIS")
    for name, analysis in ANALYSES.items():
        said = analysis.summary.replace("%", "%%")  # argparse formats help with %
        parser = analyses.add_parser(name, help=said, description=said)
        add_example(parser)
        add_ig(parser)
        add_windows(parser)
        add_model(parser)
        add_aggregation(parser)
        parser.add_argument("--top-k", type=int, default=5, help="words each layer's ranking keeps (default 5)")
        add_result_cache(parser)
        options_of(name).add(parser)
        parser.set_defaults(handler=_analyze)


def _analyze(args: argparse.Namespace) -> int:
    from rcqa.analysis_run import run_analysis
    from rcqa.attribution.cache import ResultCache
    from rcqa.model import load_model

    settings, aggregation = preset_settings(args)
    qa_model = load_model(args.model, args.device)
    result, _ = explained(args, qa_model, cli_example(args), settings)
    found = run_analysis(args.analysis, qa_model, result, settings, aggregation, args.top_k,
                    cache=None if args.no_cache else ResultCache(args.cache_dir), **options_of(args.analysis).read(args))
    document = {"analysis": args.analysis, "model": result.model, "question": result.example.question,
                "answer": result.answer.text, "method": settings.method, "aggregation": aggregation,
                "k": args.top_k, "result": found.to_dict()}
    Path(args.json).write_text(json.dumps(document, ensure_ascii=False))
    print(f"{args.analysis} of the explanation of {result.answer.text!r} -> {args.json}", file=sys.stderr)
    return 0
