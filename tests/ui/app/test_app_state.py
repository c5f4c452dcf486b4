"""Explore's state (issue 35): a widget callback that fails leaves one sentence, never Streamlit's error page; the
settings that belong to an example reset with it; a link pins the target only when one was chosen."""
import pytest

from rcqa.attribution.settings import SpanSpec
from rcqa.ui import view as view_module
from rcqa.ui.view import View, to_query
from tests.helpers.app_harness import open_app, texts
from tests.helpers.views import view_with

pytestmark = pytest.mark.usefixtures("app_env")


def test_a_failing_widget_callback_is_one_sentence_and_the_page_still_draws(monkeypatch):
    app = open_app(query={"ex": "orchard-how-many"})

    def broken(rank, abstained):
        raise TypeError("tuple indices must be integers or slices, not str")

    monkeypatch.setattr(view_module, "why_not", broken)
    app.selectbox(key="rcqa.why_not").set_value(1).run()
    assert not app.exception, [e.value for e in app.exception]
    assert "Applying that change failed on the server" in texts(app.error)
    assert "tuple indices" not in texts(app.error)  # the error's text stays in the server's log
    assert app.selectbox(key="rcqa.widget.example_id").value == "orchard-how-many"  # the page is there
    assert app.query_params["contrast"] == "off"  # nothing was half applied


def test_the_settings_of_an_example_reset_with_it():
    app = open_app(query={"ex": "canal-long", "contrast": "runner-up", "win": "all", "span": "nbest:1",
                          "target": "span_logits", "vs": "foil:nbest:2"})
    assert app.query_params["target"] == "span_logits"  # chosen in the link: kept there
    app.selectbox(key="rcqa.widget.example_id").set_value("lighthouse-who").run()
    current = app.session_state["rcqa.view"]
    assert (current.contrast, current.windows, current.span, current.target, current.versus) == (
        None, "answer", SpanSpec("predicted"), "span_log_prob", None)
    assert "target" not in app.query_params and app.query_params["vs"] == "off"
    assert app.selectbox(key="rcqa.why_not").value is None


def test_a_link_carries_the_target_only_when_it_was_chosen():
    assert "target" not in to_query(View(), target_chosen=False)
    assert to_query(view_with(target="answer_vs_null"), target_chosen=True)["target"] == "answer_vs_null"


def test_a_table_shows_its_numbers_to_three_digits_and_its_headers_in_words(monkeypatch):
    """The grid would show 0.123456789 as typed and cut a header or a cell to its default width."""
    import pandas as pd
    import streamlit as st

    from rcqa.ui import show

    drawn = {}
    monkeypatch.setattr(st, "dataframe", lambda frame, **options: drawn.update(frame=frame, **options))
    question = "How many stone piers does the bridge across the Velta rest on, counted from the west bank?"
    show.table(pd.DataFrame({"final_answer_probability": [0.123456789], "question": [question], "n": [3]}),
               column_config={"final_answer_probability": st.column_config.NumberColumn(format="percent")})
    configs = drawn["column_config"]
    probability = configs["final_answer_probability"]
    assert probability["label"] == "final answer probability"  # the header in words, the page's format kept
    assert probability["type_config"]["format"] == "percent"
    assert probability["width"] >= 8 * len("final answer probability")
    assert configs["question"]["width"] >= 8 * len(question)  # a question is read whole, not cut
    assert configs["n"]["label"] == "n" and drawn["frame"].n.tolist() == [3]
    alone = show.column_shown(pd.Series([0.123456789], name="aopc"))
    assert alone["type_config"]["format"] == "%.3g"


def test_every_widget_callback_goes_through_the_guard():
    """Streamlit runs on_change / on_click before the page's guarded main: one not wrapped in show.callback would
    show Streamlit's error page for any error in it."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "rcqa" / "ui"
    found, unguarded = 0, []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            for keyword in getattr(node, "keywords", []) if isinstance(node, ast.Call) else []:
                if keyword.arg not in ("on_change", "on_click"):
                    continue
                found += 1
                value = keyword.value
                guarded = isinstance(value, ast.Call) and ast.unparse(value.func) in ("callback", "show.callback")
                constant = isinstance(value, ast.Constant) and value.value in ("ignore", "rerun")  # no code of ours
                if not (guarded or constant):
                    unguarded.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found >= 10 and unguarded == []
