"""tests.helpers.servers under `pytest -n 2`: a port free_port gave out may be taken by another test's server before
ours binds it. The wait must not take that server's health answer for ours."""
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.servers import wait_until_healthy


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
