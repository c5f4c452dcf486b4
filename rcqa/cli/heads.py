"""The heads verb: which attention heads carry the answer, as JSON (rcqa.attention_heads.HeadScores)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rcqa.cli.options import add_example, add_model, cli_example


def add_heads(commands: argparse._SubParsersAction) -> None:
    from rcqa.attention_heads import FILLS, HEAD_SCORES

    scores = ", ".join(f"{name} ({score.description})" for name, score in HEAD_SCORES.items())
    command = commands.add_parser(
        "heads", help=f"knock out every attention head alone and score it by each head score, in the window of the "
                      f"answer; JSON: layers, heads, scores {{score: layers x heads}} for {scores}, knockout "
                      "{delta_log_prob, flips}, agreement {score: Spearman per layer}")
    add_example(command, writes="the heads' scores")
    add_model(command)
    command.add_argument("--fill", choices=FILLS, default="zero", help="what replaces a knocked-out head: " + "; ".join(
        f"{name}: {text}" for name, text in FILLS.items()))
    command.set_defaults(handler=_heads)


def _heads(args: argparse.Namespace) -> int:
    from rcqa.attention_heads import score_heads
    from rcqa.model import load_model
    from rcqa.types import storage

    found = score_heads(load_model(args.model, args.device), cli_example(args), args.fill)
    Path(args.json).write_text(storage.stored_json(found))  # with its kind: rcqa.load_result reads it
    drops = found.knockout.delta_log_likelihood
    layer, head = divmod(int(drops.argmin()), found.heads)
    print(f"explained span {found.explained_span!r}, log p {found.knockout.unchanged:.3f} with every head; the "
          f"largest drop: {found.layers[layer]}, head {head} ({drops[layer, head]:+.3f}); "
          f"{int(found.knockout.flips.sum())} of {drops.size} knock-outs change the answer", file=sys.stderr)
    return 0


def add_prune_heads(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "prune-heads", help="the pruning curve of a `reproduce --heads` run: F1 on its questions as heads are "
                            "removed, least important first by each score's mean over the run, and in a random "
                            "order; JSON: counts, f1 {order: per count}, spared {order: heads removed within 1 F1 "
                            "point}, n")
    command.add_argument("run", help="a run folder written by `reproduce --heads`")
    command.add_argument("--json", metavar="OUT", help="where to write the curve (default: RUN/pruning.json, which "
                                                       "`report` draws)")
    command.add_argument("--questions", type=int, help="the first N of the run's questions (default: all)")
    command.add_argument("--step", type=int, default=6, help="heads removed between two points of the curve")
    command.add_argument("--seed", type=int, default=0, help="seed of the random order (of the first, with "
                                                              "--random-orders)")
    command.add_argument("--random-orders", type=int, default=1, metavar="N",
                         help="random orders drawn, seeded SEED, SEED + 1, …: the first is `random`, the others "
                              "`random:SEED` (default 1)")
    command.add_argument("--device", help="cpu, cuda, … (default: the best one here)")
    command.set_defaults(handler=_prune_heads)


def _prune_heads(args: argparse.Namespace) -> int:
    import json

    from rcqa.attention_heads import heads_spared, layout_for, pruning_curve
    from rcqa.cli.options import CliError
    from rcqa.dataset.aggregate import load_run, run_examples
    from rcqa.dataset.heads import PRUNING, cells_of, importance
    from rcqa.model import load_model

    run = load_run(args.run)
    cells = cells_of(run.rows)
    if not cells:
        raise CliError(f"{args.run} holds no head scores: run `python -m rcqa reproduce --heads` first")
    qa_model = load_model(run.manifest.model.name, args.device)
    if qa_model.fingerprint != run.manifest.model.fingerprint:
        raise CliError(f"{qa_model.name} is not the model the run scored (its fingerprint differs)")
    examples = [e for e in run_examples(args.run) if e.answers][:args.questions]
    layout = layout_for(qa_model, examples[0])
    counts = list(range(0, layout.layers * layout.heads + 1, args.step))
    if args.random_orders < 1:
        raise CliError("--random-orders must be at least 1")
    curves = pruning_curve(qa_model, layout, examples, importance(cells), counts, args.seed, args.random_orders)
    found = {"counts": counts, "f1": curves, "spared": {name: heads_spared(curve, counts) for name, curve in
                                                         curves.items()}, "n": len(examples),
             "model": qa_model.name, "fingerprint": qa_model.fingerprint, "seed": args.seed,
             **({"random_orders": args.random_orders} if args.random_orders > 1 else {})}
    Path(args.json or Path(args.run) / PRUNING).write_text(json.dumps(found, indent=1))
    print("; ".join(f"{name}: {spared} heads within 1 F1 point" for name, spared in found["spared"].items()),
          file=sys.stderr)
    return 0
