"""The server's shipped settings: loopback only, no error details for visitors, uploads the size of a dev file."""
import tomllib
from pathlib import Path

import streamlit.config

CONFIG = tomllib.loads((Path(__file__).parents[2] / ".streamlit" / "config.toml").read_text())
SQUAD_DEV_MB = 4_854_279 / 1e6  # dev-v1.1.json, the largest dev file a visitor is expected to bring


def test_the_server_listens_on_loopback_only():
    assert CONFIG["server"]["address"] == "127.0.0.1"


def test_visitors_see_no_error_details():
    option = streamlit.config._config_options_template["client.showErrorDetails"]
    assert CONFIG["client"]["showErrorDetails"] == "none" and "none" in option.description


def test_uploads_fit_a_dev_file_and_little_more():
    assert SQUAD_DEV_MB < CONFIG["server"]["maxUploadSize"] <= 2 * SQUAD_DEV_MB
