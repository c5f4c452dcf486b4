"""The abstention-curve verb: how far each model's threshold trades answerable F1 for abstention on a hard set's
chosen kinds (rcqa.export.abstention.abstention_tradeoff), as JSON."""
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
                                 "abstained, of, abstained_by_kind, HasAns_f1}], carried_from (--keep)}], compared "
                                 "[{model, against, abstained_difference {mean, low, high, n}}]")
    command.add_argument("models", nargs="+", help="'default-squad2', a model folder, or a training run's folder "
                                                   "(each of its kept models: step-N/, final/); LABEL=MODEL names it "
                                                   "LABEL in the JSON")
    command.add_argument("--data", required=True, help="SQuAD v2.0 file (tests/data/hard_unanswerable.json)")
    command.add_argument("--kinds", default=",".join(HARD_KINDS),
                         help=f"unanswerable kinds counted, comma-separated (default: {','.join(HARD_KINDS)})")
    command.add_argument("--floor", type=float, default=85.0,
                         help="answerable F1 the threshold must keep: where each curve stops (default 85)")
    command.add_argument("--json", required=True, help="file to write the JSON to")
    command.add_argument("--keep", help="an earlier JSON of this command on the same file, kinds and floor: its untuned "
                                        "rows (models kept along a run, since deleted) not measured again are carried "
                                        "into this one, each with carried_from")
    command.add_argument("--card", help="a model folder whose rcqa_card.json keeps the JSON too, as "
                                        "abstention_tradeoff (the Model page draws it)")
    command.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: $RCQA_DEVICE, else CUDA if present)")
    command.set_defaults(handler=_abstention_curve)


def _abstention_curve(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from rcqa.data import load_examples
    from rcqa.export.abstention import abstention_tradeoff
    from rcqa.export.card import keep_on_card
    from rcqa.model import load_model
    from rcqa.negatives import KINDS

    kinds = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise CliError(f"no kind of negative is called {', '.join(unknown) or '(none given)'}; the kinds are "
                       f"{', '.join(KINDS)}")
    if args.card and not (Path(args.card) / "rcqa_card.json").is_file():
        raise CliError(f"--card {args.card}: no rcqa_card.json there to keep the curve on")
    labelled = _labelled(args.models)
    repeated = sorted({label for label, _ in labelled if [l for l, _ in labelled].count(label) > 1})
    if repeated:
        raise CliError(f"two models are labelled {', '.join(repeated)}: give each its own LABEL=MODEL")
    carried = _carried(args.keep, {"file": Path(args.data).name, "kinds": sorted(set(kinds)), "floor": args.floor,
                                   "labels": {label for label, _ in labelled}})
    models = {label: load_model(folder, args.device) for label, folder in labelled}
    progress = lambda items: tqdm(items, desc="answering", mininterval=10)  # noqa: E731
    found = {"file": Path(args.data).name, **abstention_tradeoff(models, load_examples(args.data), kinds, args.floor,
                                                                 progress)}
    found["models"] = carried + found["models"]
    Path(args.json).write_text(json.dumps(found, indent=1))
    if args.card:
        keep_on_card(args.card, "abstention_tradeoff", found)
    for row in found["models"]:
        stop = row["stops"]
        reached = (f"{stop['abstained']} of {stop['of']} with HasAns F1 {stop['HasAns_f1']:.2f}" if stop else
                   "no threshold keeps it")
        print(f"{row['model']}: most abstained with HasAns F1 >= {args.floor:g}: {reached}", file=sys.stderr)
    return 0


def _carried(path: str | None, measured: dict) -> list[dict]:
    """--keep's rows to carry (rcqa.export.abstention.carried_rows), read before any model loads so that a bad file is refused
    at once."""
    from rcqa.export.abstention import carried_rows

    if path is None:
        return []
    name = Path(path).name
    try:
        earlier = json.loads(Path(path).read_text(encoding="utf-8"))
        if not all(isinstance(row.get("model"), str) and "threshold" in row for row in earlier["models"]):
            raise KeyError("models")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise CliError(f"--keep {name}: not a JSON this command wrote") from None
    try:
        return carried_rows(earlier, measured, name)
    except ValueError as refused:
        raise CliError(str(refused)) from None


def _labelled(given: list[str]) -> list[tuple[str, str]]:
    """(label, model) for each model given: LABEL=MODEL, or the name as given; a run's folder as its kept models."""
    from rcqa.export.checkpoints import kept_models

    pairs = []
    for text in given:
        label, _, name = text.rpartition("=") if "=" in text else ("", "", text)
        if (Path(name) / "train_config.json").is_file():
            pairs += [(f"{label or name.rstrip('/')}/{folder.name}", str(folder)) for folder in kept_models(name)]
        else:
            pairs.append((label or name, name))
    return pairs
