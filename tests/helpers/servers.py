"""Starting a dashboard server in a test: a free loopback port, and waiting until it answers its health check."""
from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listens(process: subprocess.Popen, port: int | None) -> bool:
    """Whether `process` holds the port's listening socket. Under `pytest -n 2` another test's server may have taken
    the port free_port gave out, and would answer the health check: the test would drive the wrong server. Ours then
    fails to bind and exits, which the wait reports."""
    try:
        return any(connection.status == psutil.CONN_LISTEN and connection.laddr.port == port
                   for connection in psutil.Process(process.pid).net_connections("tcp"))
    except psutil.NoSuchProcess:
        return False


def wait_until_healthy(url: str, process: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"streamlit exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200 and _listens(process, urlsplit(url).port):
                    return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"streamlit did not answer within {seconds} s:\n{log.read_text()[-3000:]}")
