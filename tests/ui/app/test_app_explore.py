"""The Explore page: examples from the gallery, an upload or a paste; the answer; the per-layer views."""
import html
import json
import re

import numpy as np
import pytest

from rcqa.gallery import gallery_example
from tests.helpers.app_harness import explain, html_of, open_app, open_tab, read_html, spec_titled, texts, values
from tests.helpers.squad_files import squad_upload
from rcqa.figures.common import axis_words

pytestmark = pytest.mark.usefixtures("app_env")


def test_a_gallery_example_is_answered_then_explained_layer_by_layer():
    app = open_app()
    app.selectbox(key="rcqa.widget.example_id").set_value("comet-who").run()
    assert app.text_input(key="rcqa.widget.question").value == "Who was the comet named after?"
    page = html_of(app)
    assert "Gold: Priya Raman" in page and "exact match" in page and "F1" in page
    assert re.findall(r"<th[^>]*>([^<]*)</th>", page)[:3] == ["rank", "answer", "probability"]  # the n-best table
    assert app.query_params["ex"] == "comet-who"

    app.button(key="rcqa.explain").click().run()
    (progress,) = app.get("progress")
    assert progress.proto.text.startswith("layer 4/4 done")
    assert app.status[0].label.startswith("Attributed 4 layers of ")
    heatmap = spec_titled(app, "Where each layer's attribution goes")
    trace = heatmap["data"][0]
    assert trace["y"] == ["embeddings", "block 0", "block 1", "block 2"]
    share = values(trace["z"])
    assert share.shape == (4, len(values(trace["x"])))
    assert np.allclose(share.sum(axis=1), 100)
    assert "rank" in trace["hovertemplate"] and "category" in trace["hovertemplate"]
    assert heatmap["layout"]["xaxis"]["title"]["text"].startswith("Words of the analysed window")
    assert "embeddings</strong>: top-5 passage words" in html_of(open_tab(app, "Top-5 words"))
    for title in ("What each layer's top-5 passage words are", "Parts of speech of each layer's top-5"):
        spec_titled(open_tab(app, "Layer roles"), title)
    assert "Early (embeddings" in texts(app.markdown)
    spec_titled(open_tab(app, "Completeness"), "Completeness per layer")
    spec_titled(open_tab(app, "One word across layers"), "“")
    labels = [b.proto.label for b in app.get("download_button")]
    assert {"⬇ CSV", "⬇ JSON"} <= set(labels)


def test_the_heatmap_can_include_the_question_and_the_top_k_view_follows_the_layer_slider():
    app = explain(open_app())
    passage_only = len(values(spec_titled(app, "Where each layer")["data"][0]["x"]))
    app.toggle(key="rcqa.widget.question_words").set_value(True).run()
    heatmap = spec_titled(app, "Where each layer")
    assert len(values(heatmap["data"][0]["x"])) > passage_only
    assert "question words, then passage words" in heatmap["layout"]["xaxis"]["title"]["text"]
    open_tab(app, "Top-5 words").select_slider(key="rcqa.widget.layer").set_value(2).run()
    assert "block 1</strong>: top-5 passage words" in html_of(app)
    assert app.query_params["layer"] == "2"


def test_settings_changes_recompute_and_travel_in_the_link():
    app = explain(open_app())
    app.selectbox(key="rcqa.widget.tolerance").set_value(None).run()
    app.number_input(key="rcqa.widget.steps").set_value(2).run()
    app.selectbox(key="rcqa.widget.baseline").set_value("zero").run()
    app.button(key="rcqa.explain").click().run()  # new settings: not computed yet
    completeness = spec_titled(open_tab(app, "Completeness"), "Completeness per layer")
    assert [text.split(" · ")[1] for text in completeness["data"][0]["text"]] == ["2 steps"] * 4
    heatmap = spec_titled(open_tab(app, "Heatmap"), "Where each layer")
    assert "baseline: zero" in heatmap["layout"]["title"]["subtitle"]["text"]
    query = app.query_params
    assert (query["steps"], query["tol"], query["baseline"]) == ("2", "off", "zero")

    app.number_input(key="rcqa.widget.top_k").set_value(3).run()  # a reading setting: no recomputation
    assert "top-3 passage words" in html_of(open_tab(app, "Top-3 words"))

    app.button(key="rcqa.preset.paper-code").click().run()
    assert app.number_input(key="rcqa.widget.steps").disabled
    query = app.query_params
    assert (query["target"], query["baseline"], query["rule"], query["steps"], query["agg"]) == (
        "paper_confidence", "zero", "paper_trapezoid", "20", "l2")
    app.button(key="rcqa.preset.paper-text").click().run()
    query = app.query_params
    assert (query["target"], query["baseline"], query["rule"], query["steps"], query["tol"], query["agg"]) == (
        "paper_confidence", "zero", "riemann_right", "50", "off", "l2_squared")


def test_rule_and_span_settings_that_cannot_apply_are_explained():
    app = open_app(query={"ex": "library-unanswerable", "span": "gold"})
    app.button(key="rcqa.explain").click().run()
    assert "This explanation cannot be taken: this example has no gold answer" in texts(app.error)
    assert app.status[0].label == "The explanation failed"
    app.selectbox(key="rcqa.widget.rule").set_value("paper_trapezoid").run()
    steps = app.number_input(key="rcqa.widget.steps")
    assert steps.value == 20 and steps.disabled


def test_a_link_reopens_the_same_view_and_reports_what_it_cannot_use():
    first = explain(open_app())
    first.selectbox(key="rcqa.widget.example_id").set_value("bridge-how-much").run()
    explain(first)
    link = dict(first.query_params)
    again = open_app(query=link)
    assert again.selectbox(key="rcqa.widget.example_id").value == "bridge-how-much"
    spec_titled(again, "Where each layer")  # served from the result cache: no click needed
    broken = open_app(query={**link, "steps": "many", "target": "nope", "ex": "no-such-example"})
    warnings = texts(broken.warning)
    assert "Ignored steps='many' from the link: must be a whole number from 1 to 512" in warnings
    assert "Ignored target='nope'" in warnings
    assert "no-such-example" in warnings
    assert broken.selectbox(key="rcqa.widget.example_id").value == "lighthouse-who"


def test_the_unanswerable_example_says_so_and_shows_the_guess_probability():
    app = open_app(query={"ex": "library-unanswerable"})
    page = html_of(app)
    assert "No answer in the passage" in page and "its best guess has probability" in page


def test_a_pasted_passage_is_shown_as_text_never_as_html():
    hostile = "The tower <script>alert(1)</script> was built by <b>Margaret Ellison</b> (rated 5<6) in 1872."
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    app.text_area(key="rcqa.widget.passage").input(hostile).run()
    app.text_input(key="rcqa.widget.question").input("Who built the tower?").run()
    tags, text = read_html(html_of(app))
    assert "script" not in tags and "b" not in tags
    assert hostile in text
    query = app.query_params
    assert query["src"] == "paste" and "<script>" in query["passage"] and query["q"] == "Who built the tower?"
    ticks = axis_words(spec_titled(explain(app), "Where each layer")["layout"]["xaxis"])
    top_words = next(view.value for view in open_tab(app, "Top-5 words").get("html")
                     if "top-5 passage words" in view.value)
    tags, text = read_html(top_words)
    assert "script" not in tags and hostile in text
    assert "5&lt;6" in ticks and not any("<" in tick for tick in ticks)


def test_a_long_pasted_passage_stays_in_the_session_and_the_link_says_so():
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    passage = " ".join([gallery_example("canal-long").passage] * 2)
    app.text_area(key="rcqa.widget.passage").input(passage).run()
    app.text_input(key="rcqa.widget.question").input("When did the railway company buy the canal?").run()
    query = dict(app.query_params)
    assert "passage" not in query and len(query["ph"]) == 12
    assert "kept in this session only" in texts(app.caption)
    reopened = open_app(query=query)
    assert "too long to travel in a link" in texts(reopened.warning)


@pytest.mark.parametrize("passage, question, message", [
    ("", "Who?", "Choose a gallery example, upload a file, or paste a passage"),
    ("The tower was built in 1872.", "", "the question is empty"),
    ("word " * 15_000, "Which word?", "has 15,000 words; the limit is 10,000"),
])
def test_bad_pasted_input_gets_a_message_not_a_traceback(passage, question, message):
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    app.text_area(key="rcqa.widget.passage").input(passage).run()
    app.text_input(key="rcqa.widget.question").input(question).run()
    assert not app.exception
    assert message in texts(app.error) + texts(app.info)
    assert "rcqa.explain" not in [b.key for b in app.button]


def test_an_uploaded_squad_file_can_be_searched_and_answered():
    lighthouse, bridge = gallery_example("lighthouse-when"), gallery_example("bridge-how-many")
    upload = squad_upload((lighthouse.passage, lighthouse.question, "1872"),
                          (bridge.passage, bridge.question, "7"))
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("upload").run()
    app.get("file_uploader")[0].set_value(("dev.json", upload, "application/json")).run()
    assert "2 of 2 questions in dev.json match" in texts(app.caption)
    assert app.text_input(key="rcqa.widget.question").value == lighthouse.question
    app.text_input(key="rcqa.upload_filter").input("piers").run()
    assert "1 of 2 questions" in texts(app.caption)
    app.selectbox(key="rcqa.widget.example_id").set_value("q1").run()
    assert app.text_input(key="rcqa.widget.question").value == bridge.question
    assert "Gold: 7" in html_of(app)
    explain(app)
    spec_titled(app, "Where each layer")


def test_an_uploaded_file_is_let_go_once_read(monkeypatch):
    """Streamlit's upload store would keep the file's bytes for the session's life; read, they are dropped."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

    stored, add_file = [], MemoryUploadedFileManager.add_file
    def add_once(store, session_id, file):  # a browser sends a file's bytes once; AppTest sends them every run
        if file.file_id not in [known for *_, known in stored]:
            stored.append((store, session_id, file.file_id))
            add_file(store, session_id, file)

    monkeypatch.setattr(MemoryUploadedFileManager, "add_file", add_once)
    lighthouse, bridge = gallery_example("lighthouse-when"), gallery_example("bridge-how-many")
    upload = squad_upload((lighthouse.passage, lighthouse.question, "1872"), (bridge.passage, bridge.question, "7"))
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("upload").run()
    app.get("file_uploader")[0].set_value(("dev.json", upload, "application/json")).run()
    assert "2 of 2 questions in dev.json match" in texts(app.caption)
    (store, session_id, file_id), = stored
    assert store.get_files(session_id, [file_id]) == []
    app.text_input(key="rcqa.upload_filter").input("piers").run()  # the uploader now holds a deleted file
    assert not app.exception, [e.value for e in app.exception]
    assert "1 of 2 questions" in texts(app.caption)


@pytest.mark.parametrize("content, message", [
    (b"{not json", "not valid JSON"),
    (b'{"data": [{"paragraphs": [{"qas": []}]}]}', "'context' must be a non-empty string"),
    (b"\xff\xfe\x00binary", "not UTF-8 text"),
])
def test_a_malformed_upload_is_an_error_and_the_app_stays_usable(content, message):
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("upload").run()
    app.get("file_uploader")[0].set_value(("broken.json", content, "application/json")).run()
    assert not app.exception
    errors = texts(app.error)
    assert "The file could not be read: 'broken.json'" in errors and message in errors
    app.radio(key="rcqa.widget.source").set_value("gallery").run()
    assert "Gold: Margaret Ellison" in html_of(app)


def test_html_drawn_as_markdown_is_one_raw_line_that_reads_back_as_the_same_html():
    from rcqa.ui.show import markdown_html

    fragment = '<div style="white-space: pre-wrap;">Costs $5 and $10.\n\nA *new* paragraph :red[x]\r\n</div>'
    line = markdown_html(fragment)
    assert "\n" not in line and "\r" not in line and "$" not in line  # a blank line would end the raw HTML block
    assert html.unescape(line) == fragment
    tags, text = read_html(line)
    assert tags == {"div"} and text == html.unescape(text)  # the text is kept, with its newlines


def test_only_the_open_tab_is_built_each_view_once_and_the_worker_drew_the_first():
    from rcqa import figures
    from rcqa.ui import drawn

    def name(build) -> str:
        return f"{build.__module__}.{build.__qualname__}"

    drawn.forget()
    app = explain(open_app(query={"ex": "comet-who"}))
    spec_titled(app, "Where each layer")
    key, result = app.session_state["rcqa.result"]
    builds = drawn.kept_for(key, result.example).builds
    assert builds[name(figures.heatmap)] == 0  # drawn by the worker process with the result, only sent here
    closed = [figures.roles, figures.pos_mix, figures.topk_passage, figures.completeness, figures.word_across_layers]
    assert not any(builds[name(build)] for build in closed)
    open_tab(app, "Layer roles")
    assert (builds[name(figures.roles)], builds[name(figures.pos_mix)]) == (1, 1)
    assert not any(builds[name(build)] for build in (figures.topk_passage, figures.completeness))
    open_tab(app, "Heatmap")
    open_tab(app, "Layer roles")  # opened again: drawn from what was kept
    assert (builds[name(figures.roles)], builds[name(figures.heatmap)]) == (1, 0)
