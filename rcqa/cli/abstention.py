"""The abstention-curve verb: how far each model's threshold trades answerable F1 for abstention on a hard set's
chosen kinds (rcqa.export.abstention_tradeoff), as JSON."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rcqa.cli.options import CliError

HARD_KINDS = ("antonym", "entity_swap")  # the hand-written set's kinds the third stage was trained for


def add_abstention_curve(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "abstention-curve", help="on a SQuAD v2.0 file whose ids name their kind (the hand-written set), each model's "
                                 "abstention on the chosen kinds against its answerable F1 at every threshold; JSON: "
                                 "kinds, floor, models [{model, threshold, at_threshold, stops, curve [{threshold, "
                                 "abstained, of, abstained_by_kind, HasAns_f1}]}], compared [{model, against, "
                                 "abstained_difference {mean, low, high, n}}]")
    command.add_argument("models", nargs="+", help="'default-squad2', a model folder, or a training run's folder "
                                                   "(each of its kept models: step-N/, final/)")
    command.add_argument("--data", required=True, help="SQuAD v2.0 file (tests/data/hard_unanswerable.json)")
    command.add_argument("--kinds", default=",".join(HARD_KINDS),
                         help=f"unanswerable kinds counted, comma-separated (default: {','.join(HARD_KINDS)})")
    command.add_argument("--floor", type=float, default=85.0,
                         help="answerable F1 the threshold must keep: where each curve stops (default 85)")
    command.add_argument("--json", required=True, help="file to write the JSON to")
    command.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: $RCQA_DEVICE, else CUDA if present)")
    command.set_defaults(handler=_abstention_curve)


def _abstention_curve(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from rcqa.data import load_examples
    from rcqa.export import abstention_tradeoff, kept_models
    from rcqa.model import load_model
    from rcqa.negatives import KINDS

    kinds = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise CliError(f"no kind of negative is called {', '.join(unknown) or '(none given)'}; the kinds are "
                       f"{', '.join(KINDS)}")
    names = [str(m) for given in args.models
             for m in (kept_models(given) if (Path(given) / "train_config.json").is_file() else [given])]
    models = {name: load_model(name, args.device) for name in names}
    progress = lambda items: tqdm(items, desc="answering", mininterval=10)  # noqa: E731
    found = abstention_tradeoff(models, load_examples(args.data), kinds, args.floor, progress)
    Path(args.json).write_text(json.dumps({"file": Path(args.data).name, **found}, indent=1))
    for row in found["models"]:
        stop = row["stops"]
        reached = (f"{stop['abstained']} of {stop['of']} with HasAns F1 {stop['HasAns_f1']:.2f}" if stop else
                   "no threshold keeps it")
        print(f"{row['model']}: most abstained with HasAns F1 >= {args.floor:g}: {reached}", file=sys.stderr)
    return 0
