"""Verbs on a whole dataset: reproduce (explain it on a Dask cluster into a resumable store) and report."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rcqa.cli.options import (CliError, add_aggregation, add_answer_protocol, add_ig, add_model, add_windows,
                              preset_settings)
from rcqa.text import is_quantifier_question

QUESTION_KINDS = {"all": lambda question: True, "quantifier": is_quantifier_question}
MAX_BATCH = 256  # questions a --batch may share passes among: a bound, not a setting (the memory is the GPU's)


def add_reproduce(commands: argparse._SubParsersAction) -> None:
    from rcqa.dataset.extras import EXTRAS
    from rcqa.faithfulness.deletion import OPERATORS

    command = commands.add_parser("reproduce", help="explain a whole dataset on a Dask cluster into a resumable "
                                                    "Parquet store (rows of per-layer analyses + manifest.json)")
    command.add_argument("--data", required=True, help="'squad-dev' (SQuAD v1.1 dev) or a SQuAD/DuoRC file")
    command.add_argument("--limit", type=int, help="first N questions only (of those --questions keeps)")
    command.add_argument("--questions", choices=QUESTION_KINDS, default="all",
                         help="quantifier: only the how-many / how-much questions (the paper's quantifier analysis; "
                              "the questions --contrast distractor-number needs), in the file's order")
    command.add_argument("--out", required=True, help="run folder; rerunning into it resumes the run")
    command.add_argument("--workers", type=int, default=1, help="worker processes of the local cluster")
    command.add_argument("--gpus", type=int, default=0, metavar="N",
                         help="a local cluster of one worker per GPU (CUDA_VISIBLE_DEVICES 0 … N−1) instead of "
                              "--workers; the examples run on --device cuda")
    command.add_argument("--batch", type=int, default=1, metavar="N",
                         help=f"explain N questions from shared passes where the method can (AttnLRP: their windows "
                              f"padded into one forward and backward), at most {MAX_BATCH}; for a GPU: on CPUs a "
                              f"batch is no faster than its questions one by one (default 1)")
    command.add_argument("--scheduler", help="address of an existing Dask scheduler (default: "
                                             "$DASK_SCHEDULER_ADDRESS, else a local cluster on 127.0.0.1)")
    command.add_argument("--retry-failed", action="store_true",
                         help="explain again the examples an earlier run recorded as failed")
    add_ig(command)
    add_windows(command)
    add_aggregation(command)
    command.add_argument("--top-k", type=int, default=5)
    for name, description in EXTRAS.items():
        command.add_argument(f"--{name}", action="store_true", help=f"also add {description}")
    command.add_argument("--draws", type=int, default=5,
                         help="random draws per example of --faithfulness and --interventions")
    add_answer_protocol(command)
    command.add_argument("--naopc-beam", type=int, default=0, metavar="B",
                         help="--faithfulness also searches AOPC's bounds with a beam of B for normalised AOPC "
                              "(about 2·B·words·10 re-answers per example; default 0: not searched)")
    command.add_argument("--operator", choices=OPERATORS, default="pad",
                         help="how --faithfulness deletes a word: " + "; ".join(f"{name}: {text}"
                                                                                 for name, text in OPERATORS.items()))
    add_model(command)
    command.set_defaults(handler=_reproduce)


def _reproduce(args: argparse.Namespace) -> int:
    from rcqa.data import load_examples
    from rcqa.dataset.extras import EXTRAS, ONE_WINDOW
    from rcqa.dataset.runner import Job, new_manifest, reproduce
    from rcqa.resources import squad_file

    if args.workers < 1 or args.gpus < 0:
        raise CliError("--workers must be at least 1 and --gpus at least 0")
    if not 1 <= args.batch <= MAX_BATCH:
        raise CliError(f"--batch must be between 1 and {MAX_BATCH}")
    settings, aggregation = preset_settings(args)
    # the deletion tests, the knock-outs and a comparison of two methods read the explanation's window; the lens
    # reads the example itself
    if settings.windows == "all" and (one_window := [name for name in ONE_WINDOW if getattr(args, name)]):
        raise CliError(f"--{' and --'.join(one_window)} read{'s' * (len(one_window) == 1)} one window; run them "
                       "without --windows all")
    data = squad_file("dev") if args.data == "squad-dev" else Path(args.data)
    examples = [example for example in load_examples(data) if QUESTION_KINDS[args.questions](example.question)]
    examples = examples[: args.limit]
    job = Job(args.model, settings, aggregation, args.top_k, args.device or ("cuda" if args.gpus else None),
              tuple(name for name in EXTRAS if getattr(args, name)), args.draws,
              spare_answer=args.spare_answer, naopc_beam=args.naopc_beam, operator=args.operator, batch=args.batch)
    manifest = reproduce(job, examples, new_manifest(job, args.preset, data, args.limit, args.data, args.questions),
                         Path(args.out), workers=args.workers, scheduler=args.scheduler, retry_failed=args.retry_failed,
                         gpus=args.gpus)
    counts = manifest.counts
    assert counts is not None  # the runner counts on its first save
    print(f"{counts.done} of {counts.total} examples in {args.out} ({counts.failed} failed, "
          f"see manifest.json)", file=sys.stderr)
    return 0


def add_report(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("report", help="dataset-level analyses of one or more reproduce runs: summary.json, "
                                                 "CSV tables, PNG/SVG figures and an offline HTML page")
    command.add_argument("runs", nargs="+", help="run folders written by `reproduce`; the first is the report's "
                                                 "subject, the others are compared with it")
    command.add_argument("--out", required=True, help="folder for the report")
    command.add_argument("--no-images", action="store_true",
                         help="skip PNG/SVG export (the HTML then embeds interactive figures)")
    command.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from rcqa.dataset import store
    from rcqa.dataset.report import write

    try:
        summary = write(args.runs, args.out, images=not args.no_images)
    except FileNotFoundError as error:  # a folder that is not a run's: load_run's one sentence
        raise CliError(str(error)) from None
    print(f"report of {summary.subject.n} examples written to {Path(args.out) / 'report.html'}", file=sys.stderr)
    for folder in args.runs:
        if repeated := store.repeated_rows(Path(folder)):
            print(f"{folder}: {repeated} {'rows repeat' if repeated > 1 else 'row repeats'} another's id (a question asked twice "
                  "in the data, scored under its twin's id by an earlier rcqa), which the report counts twice; "
                  "`reproduce` into the folder again mends the run", file=sys.stderr)
    return 0
