"""The sentence under the answer for a question the model cannot read, and each text box's limit said in one
sentence (issue 61, finding 12)."""
import rcqa.ui.inputs as inputs
from rcqa.model import load_model
from rcqa.types import Example
from rcqa.ui.examples import PASSAGE_LIMIT, QUESTION_LIMIT

PASSAGE = "The lighthouse was designed by Ada Merrow in 1821."


def test_a_chinese_question_is_noted_once_per_model_and_text(monkeypatch):
    qa_model = load_model("default")
    asked = []
    real = inputs.unread_warning
    monkeypatch.setattr(inputs, "unread_warning", lambda *texts: asked.append(texts[1:]) or real(*texts))
    chinese = Example(id="zh", passage=PASSAGE, question="谁设计了灯塔？")
    note = inputs.unread_note(qa_model, chinese)
    assert note is not None and note.startswith("Most of the question's tokens are unknown") and "(6 of 7:" in note
    assert inputs.unread_note(qa_model, chinese) == note and len(asked) == 1  # a rerun does not tokenise again
    assert inputs.unread_note(qa_model, Example(id="en", passage=PASSAGE, question="Who designed it?")) is None


def test_each_box_says_its_limit_and_what_a_longer_paste_does():
    assert QUESTION_LIMIT == ("The question box holds at most 2,000 characters: a longer paste is ignored, and the "
                              "question stays as it was.")
    assert PASSAGE_LIMIT.startswith("The passage box holds at most 100,000 characters")


def test_explore_says_under_the_answer_that_it_could_not_read_the_question(app_env):
    from tests.helpers.app_harness import open_app, texts

    app = open_app(query={"ex": "lighthouse-who", "q": "谁设计了灯塔？"})  # the tiny model shares BERT's vocabulary
    assert "Most of the question's tokens are unknown" in texts(app.warning)
    app = open_app(query={"ex": "lighthouse-who"})
    assert "tokens are unknown" not in texts(app.warning)
    assert QUESTION_LIMIT in app.text_input(key="rcqa.widget.question").help
