"""Nothing heavy in the page thread (issue 33): a long passage is answered through the job queue, the text boxes
have their limits and an oversize paste is refused before it is read, a search of an uploaded file is refused past
its limits before it reads a question and reads a shared title once, and a chart's PNG / SVG is drawn through the
queue, on a click."""
import threading

import pytest

import rcqa.figures.common
import rcqa.qa
import rcqa.ui.show
from rcqa.figures.common import image_export_available
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.types import Example
from rcqa.ui import examples
from tests.helpers.app_harness import explain, html_of, open_app, texts

pytestmark = pytest.mark.usefixtures("app_env")


def outside_the_queue(calls: list):
    """A stand-in for rcqa.qa.logits that records each forward run in this process outside the queue's threads."""
    logits = rcqa.qa.logits

    def recorded(*args, **kwargs):
        if not threading.current_thread().name.startswith("rcqa-job"):
            calls.append(threading.current_thread().name)
        return logits(*args, **kwargs)
    return recorded


def test_a_long_paste_is_answered_through_the_queue_not_in_the_page_thread(monkeypatch, tiny_model_dirs):
    canal = gallery_example("canal-long")
    passage = " ".join([canal.passage] * 2)  # 5,169 characters: past what a page answers itself
    expected = rcqa.qa.answer(load_model(tiny_model_dirs["bert"]), passage, canal.question)
    app = open_app()
    calls = []
    monkeypatch.setattr(rcqa.qa, "logits", outside_the_queue(calls))
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    app.text_area(key="rcqa.widget.passage").input(passage).run()
    app.text_input(key="rcqa.widget.question").input(canal.question).run()
    assert not app.exception, [e.value for e in app.exception]
    assert calls == []  # the model ran in a worker process (or a queue thread), never in the page's
    assert [status.label for status in app.status] == ["Reading the passage"]
    (answer,) = [found.answer for request, found in app.session_state["rcqa.kept"].items()
                 if request[0] == "answer" and found.answer.question == canal.question]
    assert answer.n_windows == expected.n_windows > 2
    assert [span.text for span in answer.nbest] == [span.text for span in expected.nbest]
    assert f"window {answer.best.window + 1} of {answer.n_windows}" in html_of(app)


def test_a_long_paste_the_model_cannot_read_is_one_sentence_from_the_queue():
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    app.text_area(key="rcqa.widget.passage").input("\x01\x02 " * 2_000).run()  # 6,000 characters, read in a worker
    assert not app.exception, [e.value for e in app.exception]
    assert [status.label for status in app.status] == ["Reading the passage… failed"]
    assert "The model cannot answer this: the passage looks like binary data, not text" in texts(app.error)


def test_a_short_paste_is_answered_in_the_page_without_the_queue():
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    app.text_area(key="rcqa.widget.passage").input("The tower was built by Margaret Ellison in 1872.").run()
    app.text_input(key="rcqa.widget.question").input("Who built the tower?").run()
    assert not app.status and "The model's answer" in texts(app.caption)


def test_the_text_boxes_have_their_limits_and_an_oversize_paste_is_cut_before_it_is_read():
    app = open_app()
    assert app.text_input(key="rcqa.widget.question").max_chars == rcqa.qa.MAX_QUESTION_CHARS
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    assert app.text_area(key="rcqa.widget.passage").max_chars == rcqa.qa.MAX_PASSAGE_CHARS
    app.text_area(key="rcqa.widget.passage").set_value("word " * 2_000_000).run()  # 10 MB, as a crafted client sends
    assert not app.exception, [e.value for e in app.exception]
    assert len(app.session_state["rcqa.view"].passage) == 100_000  # the server keeps the box's limit
    assert "holds at most 100,000 characters" in texts(app.caption)
    assert "the passage has 20,000 words; the limit is 10,000" in texts(app.error)


class ReadCounted(str):
    """A title or question that counts the times anything reads it."""
    reads = 0

    def lower(self):
        ReadCounted.reads += 1
        return super().lower()

    def __format__(self, spec):
        ReadCounted.reads += 1
        return super().__format__(spec)

    def __contains__(self, part):
        ReadCounted.reads += 1
        return super().__contains__(part)


def test_a_search_past_its_limits_is_refused_before_any_question_is_read():
    questions = [Example(id=str(i), passage="p", question=ReadCounted(f"question {i}"), title=ReadCounted("Bridges"))
                 for i in range(100)]
    ReadCounted.reads = 0
    too_long = "x" * (examples.SEARCH_CHARS + 1)
    with pytest.raises(ValueError, match=f"the search has {examples.SEARCH_CHARS + 1} characters; the limit is "
                                         f"{examples.SEARCH_CHARS}"):
        examples.matching(questions, too_long)
    many = " ".join(["bridge"] * (examples.SEARCH_WORDS + 1))
    with pytest.raises(ValueError, match=f"the search has {examples.SEARCH_WORDS + 1} words; the limit is "
                                         f"{examples.SEARCH_WORDS}"):
        examples.matching(questions, many)
    assert ReadCounted.reads == 0


def test_a_search_matches_every_word_in_the_question_or_title_and_reads_a_shared_title_once_a_word():
    small = [Example(id="a", passage="p", question="Who built the bridge?", title="Rivers"),
             Example(id="b", passage="p", question="When did it open?", title="Bridges of Ohio"),
             Example(id="c", passage="p", question="Who paid?", title="Canals")]
    for text, ids in [("bridge", ["a", "b"]), ("WHO", ["a", "c"]), ("who bridge", ["a"]), ("ohio open", ["b"]),
                      ("", ["a", "b", "c"]), ("tunnel", [])]:
        shown, total = examples.matching(small, text)
        assert [e.id for e in shown] == ids and total == len(ids), text
    title = ReadCounted("A very long article title " * 10_000)  # one article's title, shared by its questions
    questions = [Example(id=str(i), passage="p", question=f"What is bridge {i}?", title=title) for i in range(1000)]
    ReadCounted.reads = 0
    shown, total = examples.matching(questions, "article bridge", limit=10)
    assert total == 1000 and [e.id for e in shown] == [str(i) for i in range(10)]
    assert ReadCounted.reads <= 2  # once for each word, not once for each of the 1,000 questions


def test_the_upload_search_box_has_its_limit_and_the_page_refuses_a_longer_search_in_one_sentence(monkeypatch):
    from tests.helpers.squad_files import squad_upload

    searches, matching = [], examples.matching

    def counted(questions, text):
        searches.append(text)
        return matching(questions, text)

    monkeypatch.setattr(examples, "matching", counted)
    lighthouse, bridge = gallery_example("lighthouse-when"), gallery_example("bridge-how-many")
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("upload").run()
    upload = squad_upload((lighthouse.passage, lighthouse.question, "1872"), (bridge.passage, bridge.question, "7"))
    app.get("file_uploader")[0].set_value(("dev.json", upload, "application/json")).run()
    app.text_input(key="rcqa.upload_filter").input("piers").run()
    app.selectbox(key="rcqa.widget.example_id").set_value("q1").run()
    assert "1 of 2 questions" in texts(app.caption)
    assert searches == ["", "piers"]  # choosing a question searched no more: the session kept the search
    search = app.text_input(key="rcqa.upload_filter")
    assert search.max_chars == examples.SEARCH_CHARS
    search.set_value("the piers of the old bridge").run()  # six words, past the limit of five
    assert not app.exception, [e.value for e in app.exception]
    assert "The search was not run: the search has 6 words; the limit is 5" in texts(app.warning)
    assert "0 of 2 questions in dev.json match" in texts(app.caption)


@pytest.mark.skipif(not image_export_available(), reason="kaleido finds no local Chromium")
def test_a_charts_image_is_drawn_in_a_worker_process_on_a_click(monkeypatch):
    drawn_here = []

    def image(figure, format):
        drawn_here.append(format)
        return b"drawn in the server's process"

    monkeypatch.setattr(rcqa.figures.common, "figure_image", image)
    monkeypatch.setattr(rcqa.ui.show, "image_export_available", lambda: True)
    app = explain(open_app(query={"ex": "comet-who", "steps": "3"}))
    assert "⬇ PNG" not in [button.proto.label for button in app.get("download_button")]
    asks = [button.key for button in app.button if button.key.startswith("image-") and button.key.endswith("-png")]
    assert asks
    app.button(key=asks[0]).click().run()
    assert not app.exception, [e.value for e in app.exception]
    name = asks[0].removeprefix("image-").removesuffix("-png")
    assert f"Drew {name}.png" in [status.label for status in app.status]
    assert drawn_here == []  # neither in the page's thread nor in the queue's: in a worker process
    [png] = app.session_state["rcqa.images"].values()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")  # kaleido's, from the worker
    downloads = {button.proto.label: button for button in app.get("download_button")
                 if button.key == f"download-{name}-png"}
    assert list(downloads) == ["⬇ PNG"]
    app.run()  # a rerun offers the image made, without drawing it again
    assert not [status.label for status in app.status if status.label.startswith(("Drawing", "Drew"))]
    assert f"download-{name}-png" in [button.key for button in app.get("download_button")]
