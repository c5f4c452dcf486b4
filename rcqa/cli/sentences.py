"""The sentence-check verb: each method's sentence scores over many questions against the model's own sentence
ablations (rcqa.faithfulness.sentences.over_questions), resumable, as JSON."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rcqa.cli.options import add_model

CHECKS = "questions.jsonl"  # one question's checks a line: a stopped run resumes from it
SUMMARY = "sentence-check.json"


def add_sentence_check(commands: argparse._SubParsersAction) -> None:
    from rcqa.attribution.layerwise import LAYERWISE_METHODS

    command = commands.add_parser(
        "sentence-check", help="over the first N questions, every method's sentence scores at every layer against "
                               "leaving each sentence out and ContextCite's surrogate (the model re-answering), each "
                               "against a random ranking and against each other, with paired intervals; JSON "
                               "(OUT/sentence-check.json): questions, layers, methods, held_out_r2, means, "
                               "against_random and between {measure: …, per layer}, verdicts")
    command.add_argument("--data", default="squad-dev", help="'squad-dev' (SQuAD v1.1 dev, the default) or a "
                                                             "SQuAD/DuoRC file")
    command.add_argument("--limit", type=int, default=200, help="the first N questions (default 200)")
    command.add_argument("--methods", nargs="+", choices=LAYERWISE_METHODS, default=list(LAYERWISE_METHODS),
                         help="the methods compared, each under the default preset (default: every one)")
    command.add_argument("--ablations", type=int, default=32, help="ContextCite's random ablations per question, a "
                                                                   "quarter held out for its R² (0: none; default 32)")
    command.add_argument("--out", required=True, help="a folder: OUT/questions.jsonl keeps each question's checks "
                                                      "as it is done, and a run resumes from it")
    add_model(command)
    command.set_defaults(handler=_sentence_check)


def _sentence_check(args: argparse.Namespace) -> int:
    from rcqa.attribution.layerwise import layerwise_method
    from rcqa.attribution.settings import resolve
    from rcqa.cli.options import CliError
    from rcqa.data import load_examples
    from rcqa.faithfulness.sentences.over_questions import checked_questions, summarize
    from rcqa.model import load_model
    from rcqa.resources import squad_file

    if args.limit < 1 or args.ablations < 0 or 0 < args.ablations < 8:
        raise CliError("--limit must be at least 1 and --ablations 0 or at least 8 (a quarter is held out)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    methods = list(dict.fromkeys(args.methods))
    settings = {name: resolve("default", method=name) for name in methods}
    examples = load_examples(squad_file("dev") if args.data == "squad-dev" else Path(args.data))[:args.limit]
    qa_model = load_model(args.model, args.device)
    questions = list(checked_questions(qa_model, examples, settings, out / CHECKS, args.ablations))
    document = {"data": args.data, "model": qa_model.name, "fingerprint": qa_model.fingerprint,
                "ablations": args.ablations, **summarize(questions, methods,
                                                         {name: layerwise_method(name).label for name in methods})}
    (out / SUMMARY).write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print("\n".join(document["verdicts"]), file=sys.stderr)
    return 0
