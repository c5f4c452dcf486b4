"""Issue 41, a researcher's first hour, where it is not visual: the side-by-side view that would set an explanation
against itself says so before anything is queued, the line under Explore's title names the method chosen, and a
contrast's foil is outlined in the passage once it is explained."""
import pytest

from tests.helpers.app_harness import explain, html_of, open_app, read_html, spec_titled, texts

pytestmark = pytest.mark.usefixtures("app_env")
PAGE = "pages/side_by_side.py"


def test_side_by_side_against_the_gold_span_it_explains_already_queues_nothing_and_says_so():
    # the tiny model's n-best span #5 (nbest:4) on the bridge is "2.4 million pounds", the gold answer: A explains
    # the gold span's tokens, and B, the gold span, would be A again
    app = open_app(query={"ex": "bridge-how-much", "span": "nbest:4", "vs": "gold"}, page=PAGE)
    said = [info.value for info in app.info]
    assert len(said) == 1 and "would be the same explanation" in said[0] and "“2.4 million pounds”" in said[0]
    assert said[0].count(". ") == 0  # one sentence
    assert "rcqa.explain_pair" not in {button.key for button in app.button}  # no job to ask for
    assert not {key for key in app.session_state if str(key).startswith("rcqa.ticket")}  # and none queued
    assert not app.get("plotly_chart")


def test_side_by_side_against_the_gold_span_of_another_answer_still_offers_both():
    # the tiny model's answer, 1,450, is not the gold 600: two explanations, one click away
    app = open_app(query={"ex": "orchard-how-many", "vs": "gold"}, page=PAGE)
    assert not [info.value for info in app.info if "same explanation" in info.value]
    assert "rcqa.explain_pair" in {button.key for button in app.button}


def test_the_line_under_the_title_names_the_method_chosen():
    app = open_app(query={"ex": "orchard-how-many"})
    assert texts(app.caption).count("Integrated Gradients at the output of every layer") == 1
    app.radio(key="rcqa.widget.method").set_value("attnlrp").run()
    shown = texts(app.caption)
    assert "AttnLRP relevance at the output of every layer" in shown
    assert "Integrated Gradients at the output" not in shown


def test_a_contrasts_foil_is_outlined_in_the_passage_once_explained():
    app = open_app(query={"ex": "orchard-how-many", "contrast": "nbest:1"})
    assert "outline: 2px dashed" not in html_of(app)  # not before: the explanation places the foil
    explain(app)
    _, result = app.session_state["rcqa.result"]
    foil = result.targets[0].foil
    assert foil.text == result.example.passage[foil.start_char:foil.end_char] == result.answer.nbest[1].text
    passage = next(block.value for block in app.markdown if "Highlighted: the model" in block.value)
    # every piece outlined (a foil overlapping the answer is cut where the answer's highlight starts), in order
    outlined = "".join(read_html(piece.split(">", 1)[1].split("</span>", 1)[0])[1]
                       for piece in passage.split("outline: 2px dashed")[1:])
    assert outlined.replace("&#44;", ",") == foil.text
    assert f"Outlined in blue: the contrast's foil “{foil.text}”" in passage.replace("&#44;", ",")


def test_switching_the_method_keeps_the_last_picture_and_says_what_each_method_explains():
    app = explain(open_app(query={"ex": "orchard-how-many"}))  # the tiny model: nothing shipped, IG on a click
    caption = texts(app.caption)
    assert "Integrated Gradients explains span_log_prob: log p(start) + log p(end)" in caption.replace("\\", "")
    app.radio(key="rcqa.widget.method").set_value("attnlrp").run()
    # not yet explained by AttnLRP: IG's heatmap stays in view, said to be IG's, AttnLRP's one click away
    note = [info.value for info in app.info if "made before" in info.value]
    assert note == ["Below is Integrated Gradients's explanation, made before; AttnLRP's is one click away (Explain "
                    "every layer, above)."]
    assert spec_titled(app, "Where each layer's attribution goes")
    assert "rcqa.explain" in {button.key for button in app.button}
    shown = texts(app.caption).replace("\\", "")
    assert "AttnLRP explains span_logits: start logit + end logit of the span." in shown  # its own target
