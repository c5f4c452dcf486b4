"""Links (issues 41.10, 42.5): a link holds the heatmap's toggles too; a model named in a link is read as a name of the
catalog's, never as a path on the server, and a link that names none is one sentence on every page that reads it."""
import pytest
from streamlit.testing.v1 import AppTest

from rcqa.ui.view import default_model, session
from tests.helpers.app_harness import APP, TIMEOUT, explain, open_app, spec_titled, texts
from rcqa.figures.common import axis_words

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
    assert shown.model == default_model() and (shown.versus is None or shown.versus.kind != "model")  # defaults in force


def test_a_link_the_view_fails_to_read_is_one_sentence_not_the_error_page(monkeypatch):
    def broken(query):
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(session, "from_query", broken)
    app = opened_on("pages/compare_layers.py", {"model": "x"})
    assert not app.exception, [e.value for e in app.exception]
    assert texts(app.warning) == "This link could not be read, so the default view is shown."


def test_the_heatmaps_toggles_travel_in_the_link_and_a_reopened_link_restores_them():
    app = explain(open_app())
    assert not {"qwords", "special"} & set(app.query_params)  # off, as by default: the link leaves them out
    app.toggle(key="rcqa.widget.question_words").set_value(True).run()
    app.toggle(key="rcqa.widget.special_tokens").set_value(True).run()
    assert (app.query_params["qwords"], app.query_params["special"]) == ("on", "on")
    reopened = explain(open_app(query=dict(app.query_params)))
    assert reopened.toggle(key="rcqa.widget.question_words").value is True
    assert reopened.toggle(key="rcqa.widget.special_tokens").value is True
    columns = axis_words(spec_titled(reopened, "Where each layer")["layout"]["xaxis"])
    question = reopened.session_state["rcqa.view"].question.split()
    assert columns[0] == "[CLS]" and "[SEP]" in columns  # the heatmap drawn as the link's sender saw it
    assert columns[1] == question[0]  # the question's words first, after [CLS]
    assert not reopened.warning


def test_a_toggle_in_a_link_is_on_or_off_and_anything_else_is_one_sentence():
    app = open_app(query={"qwords": "yes"})
    assert texts(app.warning) == "Ignored qwords='yes' from the link: choose one of on, off."
    assert app.session_state["rcqa.view"].question_words is False
