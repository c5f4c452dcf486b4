"""What a stranger's link can do: load no model outside the catalog, and put no markup of theirs on our page; and
what a failure on the server shows them: one sentence, never a traceback or a path."""
import gc
import re
import shutil
import weakref

import pytest

import rcqa.catalog
import rcqa.model
import rcqa.model.loaded
import rcqa.ui.results.answers
import rcqa.ui.results.explanations
from rcqa.ui.jobs import Cancelled
from rcqa.ui.worker import WorkerDied
from tests.helpers.app_harness import explain, open_app, texts

pytestmark = pytest.mark.usefixtures("app_env")
PHISHING = "[Session expired: sign in](https://example.invalid)"


def test_a_link_to_a_model_outside_the_catalog_loads_nothing_and_echoes_nothing(tmp_path):
    secret = tmp_path / "someones-folder"
    secret.mkdir()
    before = set(rcqa.model.loaded._loaded)
    app = open_app(query={"model": str(secret)})
    warnings = texts(app.warning)
    assert "names a model this server does not offer" in warnings and "someones-folder" not in warnings
    assert app.session_state["rcqa.view"].model != str(secret)
    assert {name for name, _ in set(rcqa.model.loaded._loaded) - before} <= {rcqa.model.loaded.canonical(n) for n in
                                                                      rcqa.catalog.catalog()}


def test_values_echoed_from_a_link_are_not_markdown():
    app = open_app(query={"steps": PHISHING, "ex": "[x](https://example.invalid)"})
    warnings = [str(w.value) for w in app.warning]
    assert any("Ignored steps=" in w for w in warnings) and any("example.invalid" in w for w in warnings)
    for warning in warnings:
        assert not re.search(r"(?<!\\)\[[^\]]*(?<!\\)\]\(", warning), warning  # no live [text](url)
        # nor a bare URL, which GFM links in the text the escapes resolve to (seen live in Chromium)
        assert not re.search(r":\\?//", warning), warning


SECRET = "/srv/secret/models/x"


@pytest.mark.parametrize("error, sentence", [  # made anew in each test: a raised error holds the frames it left
    (lambda: WorkerDied("the worker process stopped"), "the process that ran it ended"),
    (lambda: Cancelled("key"), "was cancelled"),
    (lambda: OSError(28, "No space left on device", SECRET), "could not read or write its files"),
    (lambda: RuntimeError(f"OSError: {SECRET} is not a model folder"), "failed on the server"),  # from a worker
])
def test_a_job_that_fails_on_the_server_is_one_sentence(monkeypatch, error, sentence):
    def failing(*_):
        def work(report):
            raise error()
        return work

    monkeypatch.setattr(rcqa.ui.results.explanations, "heavy", failing)
    steps = str(50 + len(sentence))  # settings no other test explains: the process's result cache holds no result
    app = explain(open_app(query={"ex": "orchard-how-many", "steps": steps}))
    assert app.session_state["rcqa.view"].steps == int(steps)
    shown = texts(app.error) + texts(app.warning)
    assert sentence in shown and SECRET not in shown and "Traceback" not in shown


def test_a_full_disk_while_a_page_draws_is_one_sentence(monkeypatch):
    def full(*_):
        raise OSError(28, "No space left on device", SECRET)

    monkeypatch.setattr(rcqa.ui.results.answers, "_reading", full)
    app = open_app(query={"ex": "orchard-how-many"})  # open_app asserts that no exception reached the page
    assert "could not read or write its files" in texts(app.error) and SECRET not in texts(app.error)


def test_the_app_holds_its_models_only_in_load_models_bounded_cache(tiny_model_dirs, tmp_path, monkeypatch):
    own = str(shutil.copytree(tiny_model_dirs["bert"], tmp_path / "bert"))  # a model no other test's fixture holds
    monkeypatch.setenv("RCQA_MODEL", own)
    app = open_app()
    loaded = rcqa.model.load_model(own)
    assert app.session_state["rcqa.view"].model == own
    held = weakref.ref(loaded)
    del loaded
    rcqa.model.loaded._loaded.clear()  # what load_model does to a model past RCQA_MODELS_MB
    gc.collect()
    assert held() is None  # no second cache (st.cache_resource) keeps it alive beside load_model's


def test_a_link_with_a_model_name_too_long_for_a_file_shows_the_page_and_one_sentence():
    app = open_app(query={"model": "a" * 300})  # before: OSError (File name too long), on every page
    assert "names a model this server does not offer" in texts(app.warning) and "a" * 50 not in texts(app.warning)
    assert app.switch_page("pages/model.py").run().title[0].value == "Model" and not app.exception


def test_every_value_echoed_from_a_link_or_an_upload_is_bounded():
    app = open_app(query={"steps": "9" * 5000, "tol": "x" * 5000, "layer": "²" * 5000, "ex": "e" * 5000})
    warnings = [str(w.value) for w in app.warning]  # before: each quoted its value in full
    assert len(warnings) == 4 and all("5,000 characters" in w and len(w) < 200 for w in warnings), warnings
    app.radio(key="rcqa.widget.source").set_value("upload").run()
    app.get("file_uploader")[0].set_value(("n" * 5000 + ".json", b"{not json", "application/json")).run()
    (error,) = texts(app.error).splitlines()
    assert "5,005 characters" in error and "not valid JSON" in error and len(error) < 200
