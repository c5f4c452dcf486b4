"""The CLI run in-process: its exit status and what it printed."""
from rcqa.cli import main

def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err
