"""`rcqa app` starts the packaged dashboard from any folder, on the loopback address unless told otherwise."""
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.servers import free_port, wait_until_healthy

ROOT = Path(__file__).resolve().parents[3]


def test_rcqa_app_serves_the_dashboard_on_loopback_from_another_folder(tmp_path):
    port, log = free_port(), tmp_path / "streamlit.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "-m", "rcqa", "app", "--server.port", str(port),
                                    "--server.headless", "true", "--server.fileWatcherType", "none"],
                                   cwd=tmp_path, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", process, log)
        assert f"URL: http://127.0.0.1:{port}" in log.read_text()  # no network URL: only this machine is served
    finally:
        process.terminate()  # the server itself: the verb hands its process over to it
        assert process.wait(timeout=15) is not None
