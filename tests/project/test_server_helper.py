"""tests.helpers.servers under `pytest -n 2`: a port free_port gave out may be taken by another test's server before
ours binds it. The wait must not take that server's health answer for ours."""
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
    """Another process's server on a loopback port, answering every health check (a thread here: not the process
    the wait is given)."""
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


def test_a_health_answer_from_the_process_that_listens_is_taken(tmp_path):
    """The same wait, where the given process is the one listening: it returns."""
    ours = subprocess.Popen([sys.executable, "-c", """
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class Healthy(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
server = HTTPServer(("127.0.0.1", 0), Healthy)
print(server.server_address[1], flush=True)
server.serve_forever()
"""], stdout=subprocess.PIPE, text=True)
    try:
        port = int(ours.stdout.readline())
        wait_until_healthy(f"http://127.0.0.1:{port}", ours, tmp_path / "log", seconds=20)
    finally:
        ours.kill()
        ours.wait()
