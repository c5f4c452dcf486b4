"""tests.helpers.servers under `pytest -n 2`: each test process gives out ports of its own, and a port free_port gave
out may still be taken (by anything else) before ours binds it: the wait must not take that server's health answer
for ours."""
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.servers import free_port, process_ports, wait_until_healthy


class Healthy(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def other_server():
    """A server on a loopback port, answering every health check, in a thread of this test process: another
    process's to a wait given a subprocess, ours to one given this process."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Healthy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_health_answer_from_a_server_that_is_not_ours_is_not_taken_for_ours(other_server, tmp_path):
    log = tmp_path / "log"
    log.write_text("Port already in use")
    # ours: starts, cannot bind the taken port, exits (as streamlit does)
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2); raise SystemExit(1)"])
    with pytest.raises(pytest.fail.Exception, match="exited with 1"):
        wait_until_healthy(other_server, ours, log, seconds=20)


class ThisProcess:
    """This test process as the wait sees a server's process: its pid, and still running (poll gives no exit code)."""

    pid = os.getpid()

    def poll(self) -> None:
        return None


def test_a_health_answer_from_the_process_that_listens_is_taken(other_server, tmp_path):
    """The same wait, where the process it is given is the one listening (the fixture's thread is this process's):
    it returns."""
    wait_until_healthy(other_server, ThisProcess(), tmp_path / "log", seconds=20)


def test_each_test_process_has_its_own_ports_below_the_ephemeral_range():
    # by hand, under Linux's default range (32768-60999): a thousand ports each, counting down from 32767
    assert process_ports("gw0", 32768) == range(31768, 32768) == process_ports("", 32768)
    assert process_ports("gw1", 32768) == range(30768, 31768)
    with pytest.raises(ValueError, match="no span of 1000 ports below 2500 for gw1"):
        process_ports("gw1", 2500)


def test_a_port_in_use_is_passed_over_and_the_next_call_gives_another():
    ports = process_ports("gw9", 32768)[:3]  # a span no process of `pytest -n 2` gives out
    with socket.socket() as held:
        held.bind(("127.0.0.1", ports[1]))
        held.listen()
        given = [free_port(ports) for _ in range(4)]
        assert set(given) == {ports[0], ports[2]} and all(a != b for a, b in zip(given, given[1:])), given
        with socket.socket() as other, socket.socket() as third:
            other.bind(("127.0.0.1", ports[0]))
            third.bind(("127.0.0.1", ports[2]))
            with pytest.raises(RuntimeError, match=f"every loopback port from {ports[0]} to {ports[2]} is taken"):
                free_port(ports)
