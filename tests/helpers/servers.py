"""Starting a dashboard server in a test: a free loopback port, and waiting until it answers its health check."""
from __future__ import annotations

import itertools
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest


def _ephemeral_from() -> int:
    """The lowest port the kernel hands to outgoing connections and to bind(0) (ip-sysctl: ip_local_port_range)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def process_ports(worker: str, ephemeral_from: int, span: int = 1000) -> range:
    """The ports free_port gives out in the test process named `worker` (pytest-xdist's gw0, gw1, …; "" outside
    xdist): a span of its own below the ephemeral range, so neither the other test processes' servers nor any
    outgoing connection takes a port it gave out before its server binds it."""
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    start = ephemeral_from - span * (index + 1)
    if start < 1024:
        raise ValueError(f"no span of {span} ports below {ephemeral_from} for {worker}")
    return range(start, start + span)


_PORTS = process_ports(os.environ.get("PYTEST_XDIST_WORKER", ""), _ephemeral_from())
_GIVEN = itertools.count()


def free_port(ports: range = _PORTS) -> int:
    """A loopback port free now: the next of this test process's own (process_ports) that nothing has bound, so two
    servers this process starts one after the other never get the same one either."""
    for _ in ports:
        port = ports[next(_GIVEN) % len(ports)]
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"every loopback port from {ports.start} to {ports.stop - 1} is taken")


def _listens(process: subprocess.Popen, port: int | None) -> bool:
    """Whether `process` holds the port's listening socket. Something outside this test process's ports (process_ports)
    may still have taken the port free_port gave out, and would answer the health check: the test would drive the
    wrong server. Ours then fails to bind and exits, which the wait reports."""
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
