"""What a stranger's link can do: load no model outside the catalog, and put no markup of theirs on our page."""
import re

import pytest

import rcqa.model
import rcqa.catalog
from tests.app_harness import app_env, open_app, texts  # noqa: F401

pytestmark = pytest.mark.usefixtures("app_env")
PHISHING = "[Session expired: sign in](https://example.invalid)"


def test_a_link_to_a_model_outside_the_catalog_loads_nothing_and_echoes_nothing(tmp_path):
    secret = tmp_path / "someones-folder"
    secret.mkdir()
    before = set(rcqa.model._loaded)
    app = open_app(query={"model": str(secret)})
    warnings = texts(app.warning)
    assert "names a model this server does not offer" in warnings and "someones-folder" not in warnings
    assert app.session_state["rcqa.view"].model != str(secret)
    assert {name for name, _ in set(rcqa.model._loaded) - before} <= {rcqa.model.canonical(n) for n in
                                                                      rcqa.catalog.catalog()}


def test_values_echoed_from_a_link_are_not_markdown():
    app = open_app(query={"steps": PHISHING, "ex": "[x](https://example.invalid)"})
    warnings = [str(w.value) for w in app.warning]
    assert any("Ignored steps=" in w for w in warnings) and any("example.invalid" in w for w in warnings)
    for warning in warnings:
        assert not re.search(r"(?<!\\)\[[^\]]*(?<!\\)\]\(", warning), warning  # no live [text](url)
