"""The dashboard verb: `rcqa app [streamlit run options]` starts the installed dashboard (rcqa/ui/dashboard/app.py).

The verb only names that file to `streamlit run`; it imports nothing of the UI, which sits above the CLI."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "ui" / "dashboard" / "app.py"
LOOPBACK = ["--server.address", "127.0.0.1"]  # served to this machine only, unless an address is given


def add_app(commands: argparse._SubParsersAction) -> None:
    description = ("Start the dashboard. Every argument goes to `streamlit run` (e.g. --server.port 8600); it listens "
                   "on 127.0.0.1 unless --server.address says otherwise (0.0.0.0 serves every network).")
    # no option of its own: with '+' as its only prefix, every '--server.x' reaches streamlit as written
    command = commands.add_parser("app", help="start the dashboard in a browser", description=description,
                                  prefix_chars="+", add_help=False, usage="rcqa app [STREAMLIT RUN OPTIONS ...]")
    command.add_argument("streamlit", nargs="*", metavar="STREAMLIT_RUN_OPTIONS")
    command.set_defaults(handler=_app, help_text=command.format_help())


def _app(args: argparse.Namespace) -> int:
    if args.streamlit in (["-h"], ["--help"]):
        print(args.help_text, end="")
        raise SystemExit(0)
    given = any(option.startswith("--server.address") for option in args.streamlit)
    command = [sys.executable, "-m", "streamlit", "run", str(APP), *([] if given else LOOPBACK), *args.streamlit]
    sys.stdout.flush()
    os.execv(sys.executable, command)  # the server takes this process over: its signals, its exit status
