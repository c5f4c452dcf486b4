"""The Model page: what the model is, and switching models without losing the example or the app."""
import json
import shutil

import pytest

import rcqa.model.checkpoint
import rcqa.model.loaded
from tests.helpers.app_harness import html_of, open_app, spec_titled, texts, values
from tests.helpers.tiny_models import build_encoder_without_head

pytestmark = pytest.mark.usefixtures("app_env")
PAGE = "pages/model.py"


def load(app, kind: str, name: str = ""):
    app.radio(key="rcqa.model_kind").set_value(kind).run()
    if name and kind == "offered":
        app.selectbox(key="rcqa.model_offered").set_value(name).run()
    elif name:
        app.text_input(key=f"rcqa.model_name.{kind}").input(name).run()
    app.button(key="rcqa.load_model").click().run()
    assert not app.exception
    return app


def facts(app) -> dict[str, str]:
    table = app.table[0].value  # a static table: every cell whole
    return dict(zip(table.property, table.value))


def test_the_page_describes_the_model_and_its_card(tiny_model_dirs, tmp_path):
    app = open_app(PAGE)
    described = facts(app)
    assert described["architecture"] == "BertForQuestionAnswering"
    assert described["layers analysed"].startswith("4: embeddings")
    assert described["layer adapter"].startswith("BertForQuestionAnswering: blocks bert.encoder.layer (3)")
    assert "the fast path" in described["layer adapter"]
    assert len(described["fingerprint"]) == 16 and described["device"] == "cpu"
    assert "has no rcqa_card.json" in texts(app.caption)

    carded = shutil.copytree(tiny_model_dirs["distilbert"], tmp_path / "carded")
    card = {"base_model": "tiny", "squad_v1.1_dev": {"exact_match": 12.5, "f1": 20.25, "n": 8}}
    (carded / "rcqa_card.json").write_text(json.dumps(card))
    load(app, "folder", str(carded))
    assert facts(app)["architecture"] == "DistilBertForQuestionAnswering"
    scores = app.dataframe[0].value
    assert scores.iloc[0].to_dict() == {"evaluated on": "squad_v1.1_dev", "exact match": 12.5, "F1": 20.25,
                                        "questions": 8}


def test_the_offered_models_are_the_app_default_then_the_embedded_ones_then_the_operators(
        abstaining_tiny_dir, monkeypatch):
    from pathlib import Path

    monkeypatch.setenv("RCQA_MODELS", abstaining_tiny_dir)
    app = open_app(PAGE)
    app.radio(key="rcqa.model_kind").set_value("offered").run()
    offered = app.selectbox(key="rcqa.model_offered")
    default = offered.options[0]
    assert offered.options[1:] == ["default: the embedded model (SQuAD v1.1), which always answers",
                                   'default-squad2: the embedded model that can answer "no answer" (SQuAD 2.0-style)',
                                   str(Path(abstaining_tiny_dir).resolve())]
    assert default.endswith("(the app's default)")
    assert facts(app)["no answer"].startswith("not allowed by default")
    load(app, "offered", str(Path(abstaining_tiny_dir).resolve()))
    assert "Now using" in texts(app.success)
    assert facts(app)["no answer"].startswith("allowed by default")


def test_switching_models_keeps_the_example_and_the_next_explanation_uses_the_new_model(tiny_model_dirs):
    app = open_app(query={"ex": "bakery-where"})
    app.switch_page(PAGE).run()
    load(app, "folder", tiny_model_dirs["roberta"])
    assert "Now using" in texts(app.success)
    assert app.query_params["model"] == tiny_model_dirs["roberta"] and app.query_params["ex"] == "bakery-where"
    app.switch_page("pages/explore.py").run()
    assert app.selectbox(key="rcqa.widget.example_id").value == "bakery-where"
    app.button(key="rcqa.explain").click().run()
    assert app.status[0].label.startswith(f"Attributed 4 layers of {tiny_model_dirs['roberta']}")
    assert facts(app.switch_page(PAGE).run())["architecture"] == "RobertaForQuestionAnswering"


@pytest.mark.parametrize("kind, name, message", [
    ("folder", "NOHEAD", "is not an extractive-QA checkpoint"),
    ("folder", "/no/such/folder", "neither a local folder nor a hub id"),
    ("hub", "some-org/some-qa-model", "hub access is off"),
])
def test_a_model_that_cannot_load_is_an_error_and_the_app_keeps_its_model(tmp_path, kind, name, message):
    if name == "NOHEAD":
        name = str(build_encoder_without_head(tmp_path / "encoder"))
    app = open_app(PAGE)
    before = facts(app)
    load(app, kind, name)
    errors = texts(app.error)
    assert "The model could not be loaded" in errors and message in errors
    assert facts(app) == before
    app.switch_page("pages/explore.py").run()
    assert "Gold: Margaret Ellison" in html_of(app)


def test_without_a_usable_default_model_the_pages_say_what_to_do(monkeypatch, tmp_path):
    monkeypatch.delenv("RCQA_MODEL")
    monkeypatch.setitem(rcqa.model.checkpoint.EMBEDDED_MODEL_DIRS, "default", tmp_path / "missing")
    # a process that has not loaded it yet: another test's load, kept per process, would otherwise answer
    monkeypatch.setattr(rcqa.model.loaded, "_loaded", type(rcqa.model.loaded._loaded)())
    app = open_app()
    assert "the embedded model 'default' is missing" in texts(app.error)
    assert any("Model page" in link.proto.label for link in app.get("page_link"))
    app.switch_page("pages/compare_layers.py").run()
    assert "Choose a model and an example first" in texts(app.info)


def drawn(app) -> str:
    """Everything the page drew, as text: each element's message, and the data grids' cells."""
    return "\n".join(element.value.to_string() if type(element).__name__ == "Dataframe" else str(element.proto)
                     for element in app.main if hasattr(element, "proto"))


def test_public_mode_shows_no_server_path_and_offers_only_the_catalog(tiny_model_dirs, abstaining_tiny_dir,
                                                                      monkeypatch):
    from pathlib import Path

    monkeypatch.setenv("RCQA_PUBLIC", "1")
    monkeypatch.setenv("RCQA_MODELS", abstaining_tiny_dir)
    app = open_app(PAGE)
    assert not app.radio and not app.text_input  # before: "a local folder" and "a hub id", then refused
    offered = app.selectbox(key="rcqa.model_offered")
    assert offered.options[0] == "bert (the app's default)" and offered.options[-1] == "bert-squad2"
    assert facts(app)["name"] == "bert"  # before: the folder's path on the server
    offered.set_value(str(Path(abstaining_tiny_dir).resolve())).run()
    app.button(key="rcqa.load_model").click().run()
    assert texts(app.success) == "Now using bert-squad2."
    assert app.query_params["model"] == "bert-squad2"  # a link names it so, and opens it
    for page in (app, open_app(query={"ex": "bakery-where"})):
        for folder in (tiny_model_dirs["bert"], abstaining_tiny_dir):
            assert str(Path(folder).parent) not in drawn(page)
    linked = open_app(query={"model": "bert-squad2"})
    assert linked.session_state["rcqa.view"].model == str(Path(abstaining_tiny_dir).resolve())
    assert not linked.warning and facts(linked.switch_page(PAGE).run())["name"] == "bert-squad2"


def test_a_card_with_an_abstention_tradeoff_draws_it_with_its_sentences(tiny_model_dirs, tmp_path):
    curve = [{"threshold": t, "abstained": k, "of": 4, "abstained_by_kind": {"antonym": k}, "HasAns_f1": f}
             for t, k, f in ((-2.0, 4, 0.0), (-1.0, 3, 88.0), (1.0, 0, 92.0))]
    tradeoff = {"file": "hard.json", "kinds": ["antonym"], "floor": 85.0, "compared": [],
                "models": [{"model": "stage <3>", "curve": curve, "stops": curve[1], "threshold": -1.5,
                            "at_threshold": curve[0]}]}
    carded = shutil.copytree(tiny_model_dirs["bert"], tmp_path / "traded")
    (carded / "rcqa_card.json").write_text(json.dumps({"no_answer": {"threshold": -1.5},
                                                       "abstention_tradeoff": tradeoff}))
    app = load(open_app(PAGE), "folder", str(carded))
    assert "What its threshold trades (from its model card)" in texts(app.subheader)
    figure = spec_titled(app, "Abstention on the antonyms")
    assert [values(trace["y"]).tolist() for trace in figure["data"] if trace["mode"] == "lines+markers"] == [
        [100.0, 75.0, 0.0]]
    shown = texts(app.markdown)  # escaped as written: the label from the card is not markup
    assert "stage \\<3\\>: at most 3 of 4 abstained on with answerable F1 88.00" in shown
