"""Links (issues 41.10, 42.5): a link holds the heatmap's toggles too; a model named in a link is read as a name of the
catalog's, never as a path on the server, and a link that names none is one sentence on every page that reads it."""
import pytest
from streamlit.testing.v1 import AppTest

from rcqa.ui.view import default_model, session
from tests.helpers.app_harness import APP, TIMEOUT, texts

pytestmark = pytest.mark.usefixtures("app_env")

PAGES_READING_MODELS = ["pages/explore.py", "pages/compare_layers.py", "pages/side_by_side.py", "pages/methods.py",
                        "pages/model.py"]


def opened_on(page: str, query: dict[str, str]) -> AppTest:
    """The app as a link to `page` opens it: the page's own first run reads the link."""
    app = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    app.query_params.update(query)
    app.switch_page(page).run()
    return app


@pytest.mark.parametrize("page", PAGES_READING_MODELS)
@pytest.mark.parametrize("query, sentence", [
    ({"model": "~nosuchuser"}, "This link names a model this server does not offer"),
    ({"vs": "model:~x"}, "Ignored vs='model:~x' from the link: compare with gold, model:NAME"),
])
def test_a_home_folder_in_a_links_model_is_one_sentence_on_every_page(page, query, sentence):
    app = opened_on(page, query)
    assert not app.exception, [e.value for e in app.exception]  # before: "Could not determine home directory"
    warnings = texts(app.warning)
    assert sentence in warnings.replace("\\", "") and "home directory" not in warnings + texts(app.error)
    shown = app.session_state["rcqa.view"]
    assert shown.model == default_model() and not (shown.versus or "").startswith("model:")  # defaults in force


def test_a_link_the_view_fails_to_read_is_one_sentence_not_the_error_page(monkeypatch):
    def broken(query):
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(session, "from_query", broken)
    app = opened_on("pages/compare_layers.py", {"model": "x"})
    assert not app.exception, [e.value for e in app.exception]
    assert texts(app.warning) == "This link could not be read, so the default view is shown."
