"""A pytest plugin: each test's CPU seconds, every process on the machine counted (the servers, workers and Chromium a
test starts included, which --durations and `time` miss), and its wall seconds, one tab-separated line a test.

    python -m pytest -p benchmarks.cpu_per_test tests/ui/browser   # lines to $CPU_PER_TEST (default cpu-per-test.tsv)

It reads /proc/stat's user, system, irq and softirq time, not nice time, so a `nice -n 19` run beside it is left
out; anything else running is counted, so run it on quiet cores and in one process (not under -n)."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

_TICKS = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """The machine's CPU time so far outside nice and idle time: user, system, irq, softirq (proc(5))."""
    with open("/proc/stat") as stat:
        user, _nice, system, _idle, _iowait, irq, softirq = map(int, stat.readline().split()[1:8])
    return (user + system + irq + softirq) / _TICKS


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = busy_seconds(), time.monotonic()
    yield
    with Path(os.environ.get("CPU_PER_TEST", "cpu-per-test.tsv")).open("a") as out:
        out.write(f"{busy_seconds() - cpu:.1f}\t{time.monotonic() - wall:.1f}\t{item.nodeid}\n")
