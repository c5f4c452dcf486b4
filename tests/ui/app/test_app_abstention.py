"""Explore with a model that abstains: "Explain every layer" explains the abstention, the layer roles name the
rejected best span, and "why not this span?" explains "no answer" against any candidate span."""
import pytest

from rcqa.attribution.settings import SpanSpec
from rcqa.ui.view import from_query
from tests.helpers.app_harness import (TIMEOUT, explain, html_of, open_app, open_tab, spec_titled, texts,  # noqa: F401
                                       values)
from rcqa.figures.common import axis_words


@pytest.fixture(scope="module", autouse=True)
def abstaining_app(abstaining_tiny_dir, tmp_path_factory):
    """The app's default model abstains on every question (a SQuAD 2.0 card with a very low threshold)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RCQA_MODEL", abstaining_tiny_dir)
        patch.setenv("RCQA_RESULT_CACHE", str(tmp_path_factory.mktemp("results")))
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield


def shown_result(app):
    return app.session_state["rcqa.result"][1]


def test_explain_every_layer_explains_the_abstention_and_names_the_rejected_span():
    app = open_app(query={"ex": "library-unanswerable"})
    assert "No answer: the model abstains" in html_of(app)
    assert app.selectbox(key="rcqa.widget.target").value == "answer_vs_null"
    assert "Attributes why the model said no answer (answer_vs_null)" in texts(app.caption)
    explain(app)
    result = shown_result(app)
    assert result.answer.abstained and [t.name for t in result.targets] == ["answer_vs_null"]
    assert result.targets[0].span == result.answer.best.text  # the rejected best span
    errors = values(spec_titled(open_tab(app, "Completeness"), "Completeness per layer")["data"][0]["y"])
    assert len(errors) == len(result.layers)
    assert max(c.relative_error for c in result.completeness) <= 0.01
    roles = spec_titled(open_tab(app, "Layer roles"), "What each layer's top-5 passage words are")
    names = {trace["name"] for trace in roles["data"]}
    assert {"answer (the rejected best span)", "answer (the rejected best span)+query",
            "supporting (around that span)", "query"} <= names
    assert "answer (the rejected best span) = the words of the best span" in roles["layout"]["title"]["subtitle"]["text"]
    # the link leaves the target to the example (a link that pinned it would keep it on an answered question)
    assert "target" not in app.query_params


def test_a_chosen_target_is_kept_when_the_model_abstains():
    app = open_app(query={"ex": "library-unanswerable", "target": "span_log_prob"})
    assert app.selectbox(key="rcqa.widget.target").value == "span_log_prob"
    fresh = open_app(query={"ex": "library-unanswerable"})
    fresh.selectbox(key="rcqa.widget.target").set_value("span_log_prob").run()  # the default, picked
    assert fresh.selectbox(key="rcqa.widget.target").value == "span_log_prob"
    assert fresh.query_params["target"] == "span_log_prob"  # chosen: the link keeps it
    fresh.selectbox(key="rcqa.widget.example_id").set_value("vaccine-unanswerable").run()
    # the target belongs to its example: the next abstention is explained as abstentions are
    assert fresh.selectbox(key="rcqa.widget.target").value == "answer_vs_null" and "target" not in fresh.query_params


def test_why_not_this_span_explains_no_answer_against_the_chosen_candidate():
    app = open_app(query={"ex": "library-unanswerable"})
    app.selectbox(key="rcqa.why_not").set_value(2).run()
    assert app.selectbox(key="rcqa.widget.span").value == "nbest:2"
    assert app.query_params["span"] == "nbest:2" and "target" not in app.query_params
    assert app.selectbox(key="rcqa.why_not").value == 2  # the box shows what is explained
    explain(app)
    result = shown_result(app)
    third = result.answer.nbest[2]
    target = result.targets[0]
    assert (target.name, target.start_token, target.end_token, result.window) == (
        "answer_vs_null", third.start_token, third.end_token, third.window)
    assert max(c.relative_error for c in result.completeness) <= 0.01
    again = open_app(query=dict(app.query_params))  # the link reopens the same question, span and target
    assert shown_result(again).targets[0].start_token == third.start_token


def test_links_take_nbest_spans_within_the_nbest_list_only():
    assert from_query({"span": "nbest:19"})[0].span == SpanSpec("nbest", 19)
    view, problems = from_query({"span": "nbest:20"})
    assert view.span == SpanSpec("predicted") and problems[0].startswith("Ignored span='nbest:20' from the link")


def test_a_runs_example_opens_in_explore_with_the_runs_target_though_the_model_abstains(
        abstaining_tiny_dir, tmp_path, monkeypatch):
    import json

    from rcqa.cli import main
    from rcqa.gallery import gallery_example
    from tests.helpers.squad_files import squad_json

    data = tmp_path / "gallery.json"
    data.write_text(json.dumps(squad_json([gallery_example("vaccine-unanswerable")])))
    assert main(["reproduce", "--data", str(data), "--out", str(tmp_path / "runs" / "abstaining"), "--model",
                 abstaining_tiny_dir, "--tolerance", "0", "--steps", "2", "--workers", "1"]) == 0
    monkeypatch.setenv("RCQA_RUNS", str(tmp_path / "runs"))
    app = open_app("pages/dataset.py")
    app.session_state["rcqa.dataset.examples"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()
    app.button(key="rcqa.dataset.open").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.session_state["rcqa.view"].target == "span_log_prob"  # the run's, not the abstention's default
    assert "rcqa.explain" not in [button.key for button in app.button]  # shown from the run
    result = shown_result(app)
    assert result.answer.abstained and result.targets[0].name == "span_log_prob"


def test_an_abstentions_row_shows_no_answers_score_and_cls_shows_where_no_answer_is_explained():
    app = open_app(query={"ex": "library-unanswerable"})
    page = html_of(app)
    assert "(sum at [CLS])</td>" in page and "nan" not in page  # "no answer"'s score, not "nan / nan"
    assert "choose the target" not in page  # answer_vs_null, its default, already explains the abstention
    explain(app)
    columns = axis_words(spec_titled(app, "Where each layer")["layout"]["xaxis"])
    assert columns[0] == "[CLS]" and "special" not in app.query_params  # shown by default for a null target
    app.toggle(key="rcqa.widget.special_tokens").set_value(False).run()
    assert "[CLS]" not in axis_words(spec_titled(app, "Where each layer")["layout"]["xaxis"])
    assert app.query_params["special"] == "off"  # turned off, unlike the default: the link says so

    chosen = open_app(query={"ex": "library-unanswerable", "target": "span_log_prob"})
    assert "choose the target <em>null</em> or <em>answer_vs_null</em>" in html_of(chosen)
    explain(chosen)
    assert "[CLS]" not in axis_words(spec_titled(chosen, "Where each layer")["layout"]["xaxis"])
