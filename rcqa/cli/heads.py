"""The heads verb: which attention heads carry the answer, as JSON (rcqa.attention_heads.HeadScores)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rcqa.cli.options import add_example, add_model, cli_example


def add_heads(commands: argparse._SubParsersAction) -> None:
    from rcqa.attention_heads import FILLS

    command = commands.add_parser(
        "heads", help="knock out every attention head alone and score it by its gradient importance, in the window "
                      "of the answer; JSON: layers, heads, scores {method: layers x heads}, knockout {delta_log_prob, "
                      "flips}, agreement {method: Spearman per layer}")
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
