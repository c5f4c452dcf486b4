"""Verbs on speed: bench (the engine against the Captum loop, the methods, the heads, whole passages and the
dataset runner's questions an hour)."""
from __future__ import annotations

import argparse
import importlib
import json

from rcqa.bench import METHOD_BENCHES
from rcqa.cli.options import CliError, add_model, add_print_json

def add_bench(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("bench", help="time the engine against the Captum loop")
    command.add_argument("--tokens", type=int, default=256)
    command.add_argument("--steps", type=int, default=16, help="steps of the same-work comparison")
    command.add_argument("--repeats", type=int, default=1, help="keep the fastest of N runs")
    command.add_argument("--completeness", action="store_true",
                         help="instead: completeness error and words with attribution per layer over the gallery, for "
                              "the default settings, the span_logits target and the paper's settings")
    command.add_argument("--windows", type=int, metavar="N",
                         help="instead: a passage of N windows explained whole (--windows all) against its N windows "
                              "one after another, with the memory each takes")
    command.add_argument("--method", choices=METHOD_BENCHES,
                         help="instead: the method against IG's defaults, every layer, in one run (AttnLRP: with its "
                              "conservation and what its rules absorb)")
    command.add_argument("--heads", action="store_true",
                         help="instead: every attention head scored (AttnLRP per head, attention attribution, the "
                              "knock-outs, the gradient) against an AttnLRP explanation of every layer, each timed")
    command.add_argument("--runner", metavar="METHOD",
                         help="instead: the dataset runner's questions an hour with METHOD's default settings "
                              "(integrated_gradients, attnlrp, ...) over the first --questions SQuAD dev questions, "
                              "cluster start and model loads included; JSON: seconds, questions_per_hour, goal_met, "
                              "load_average_before and _after")
    command.add_argument("--questions", type=int, default=1000, help="with --runner: how many (default 1000)")
    command.add_argument("--workers", type=int, default=2, help="with --runner: worker processes (default 2)")
    command.add_argument("--memory-budget-mb", type=int, default=1024,
                         help="with --windows: the batches' memory budget on a CPU (default 1024)")
    random = command.add_mutually_exclusive_group()
    random.add_argument("--random-bert-base", action="store_const", const={}, dest="random_bert",
                        help="time a randomly initialised BERT-base (12 layers, 768 hidden) instead of --model")
    random.add_argument("--random-config", type=random_config, dest="random_bert", metavar="layers=L,hidden=H,heads=A",
                        help="time a randomly initialised BERT of this shape instead of --model (each key optional, "
                             "BERT-base's value otherwise; e.g. layers=2,hidden=64,heads=2 for a quick run)")
    command.add_argument("--matmul-precision", choices=("highest", "high", "medium"), default="highest",
                         help="also time the default settings with TF32 (high) or bf16 (medium) matrix products, "
                              "with their completeness check and the token scores' distance from float32")
    add_model(command)
    add_print_json(command)
    command.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> int:
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.bench import against_captum, heads, passage
    from rcqa.bench.completeness import completeness_distribution
    from rcqa.model import load_model
    from rcqa.model.random_model import random_bert

    if args.runner:  # the runner's workers load the model themselves
        from rcqa.attribution.layerwise import LAYERWISE_METHODS
        from rcqa.dataset import throughput

        if args.runner not in LAYERWISE_METHODS or args.questions < 1 or args.workers < 1:
            raise CliError(f"--runner takes one of {', '.join(LAYERWISE_METHODS)}, with --questions and --workers "
                           "of at least 1")
        report = throughput.run(args.model, args.runner, args.questions, args.workers, args.device)
        print(json.dumps(report, indent=2) if args.json else throughput.format_table(report))
        return 0
    if args.windows:  # each side in a process of its own, which loads the model itself
        report = passage.passage_run(args.model, args.device, args.random_bert, args.windows,
                                     ExplainSettings(memory_budget_mb=args.memory_budget_mb), args.repeats)
        print(json.dumps(report, indent=2) if args.json else passage.format_passage_table(report))
        return 0
    qa_model = (load_model(args.model, args.device) if args.random_bert is None else
                random_bert(args.device, **args.random_bert))
    if args.heads:
        report = heads.run(qa_model, tokens=args.tokens, repeats=args.repeats)
        text = heads.format_table(report)
    elif args.method:
        bench = importlib.import_module(f"rcqa.bench.methods.{args.method}")
        report = bench.run(qa_model, tokens=args.tokens, repeats=args.repeats)
        text = bench.format_table(report)
    elif args.completeness:
        report = {"default": completeness_distribution(qa_model, ExplainSettings()),
                  "span_logits": completeness_distribution(qa_model, ExplainSettings(targets=("span_logits",))),
                  "paper": completeness_distribution(qa_model, ExplainSettings.paper())}
        text = "\n".join(f"{name}: median per layer {[f'{e:.2%}' for e in r['median']]}, max "
                         f"{[f'{e:.2%}' for e in r['max']]}; passage words with attribution, fewest per layer "
                         f"{r['attributed_words_min']}" for name, r in report.items())
    else:
        report = against_captum.run(qa_model, tokens=args.tokens, steps=args.steps, repeats=args.repeats,
                                    matmul=args.matmul_precision)
        text = against_captum.format_table(report)
    print(json.dumps(report, indent=2) if args.json else text)
    return 0


RANDOM_LIMITS = {"layers": 48, "hidden": 4096, "heads": 64}  # BERT-base is 12, 768, 12; BERT-large 24, 1024, 16


def random_config(text: str) -> dict[str, int]:
    """--random-config's `layers=2,hidden=64,heads=2` as keyword arguments of rcqa.model.random_model.random_bert, each a whole
    number from 1 to its RANDOM_LIMITS, hidden a multiple of heads."""
    from rcqa.model.random_model import BERT_BASE

    shape = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, equals, value = item.partition("=")
        if key not in RANDOM_LIMITS or not equals:
            raise argparse.ArgumentTypeError(f"expected keys layers, hidden, heads as key=number, not {item[:40]!r}")
        if not value.isdigit() or not 1 <= int(value) <= RANDOM_LIMITS[key]:
            raise argparse.ArgumentTypeError(f"{key} must be a whole number from 1 to {RANDOM_LIMITS[key]}")
        shape[key] = int(value)
    hidden, heads = (shape.get(key, BERT_BASE[key]) for key in ("hidden", "heads"))
    if hidden % heads:
        raise argparse.ArgumentTypeError(f"hidden ({hidden}) must be a multiple of heads ({heads})")
    return shape
