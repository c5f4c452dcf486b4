"""Explore's contrast: "why not this span?" on an answer explains log p(answer) − log p(span), a typed foil is
matched in the passage, the layer roles name the foil and say where the answer first beats it, and links carry it."""
import pytest

from rcqa.attribution.settings import FoilSpec
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.qa import answer
from rcqa.ui.view import from_query
from tests.helpers.app_harness import explain, open_app, open_tab, spec_titled, texts

pytestmark = pytest.mark.usefixtures("app_env")


def shown_result(app):
    return app.session_state["rcqa.result"][1]


def clear_rank(app_env, example_id: str) -> int:
    """The first n-best rank whose span does not overlap the tiny model's answer (a contrast needs two spans)."""
    found = answer(load_model(app_env["bert"]), gallery_example(example_id).passage,
                   gallery_example(example_id).question)
    return next(rank for rank, span in enumerate(found.nbest) if not span.overlaps(found.best.start_char,
                                                                                   found.best.end_char))


@pytest.mark.slow  # two whole explanations through the app: about 28 s
def test_why_not_this_span_contrasts_the_answer_with_the_chosen_candidate(app_env):
    rank = clear_rank(app_env, "orchard-how-many")
    app = open_app(query={"ex": "orchard-how-many"})
    app.selectbox(key="rcqa.why_not").set_value(rank).run()
    assert app.query_params["contrast"] == f"nbest:{rank}" and app.query_params["span"] == "predicted"
    assert f"Attributes why the answer and not the n-best span #{rank + 1}" in texts(app.caption).replace("\\", "")
    open_tab(explain(app), "Layer roles")  # where the contrast is read
    assert not app.error, texts(app.error)
    result = shown_result(app)
    chosen = result.answer.nbest[rank]
    assert result.targets[0].name == "contrast" and result.targets[0].foil.text == chosen.text
    shown = texts(app.markdown).replace("\\", "")
    assert f"foil “{chosen.text}”" in shown and "On the lens the" in shown
    assert "foil" in [trace["name"] for trace in spec_titled(app, "What each layer's top-")["data"]]


def test_the_answer_itself_as_foil_is_refused_in_one_sentence(app_env):
    app = open_app(query={"ex": "orchard-how-many"})
    assert 0 not in app.selectbox(key="rcqa.why_not").options  # the answer itself is never offered
    app = open_app(query={"ex": "orchard-how-many", "contrast": "nbest:0"})  # a link may still ask for it
    explain(app)
    refused = texts(app.error)
    assert "This explanation cannot be taken: the foil" in refused and "is the explained span itself" in refused
    assert "cannot answer" not in refused and "Traceback" not in refused
    assert app.status[0].label == "The explanation failed"


def test_a_typed_foil_is_explained_and_travels_in_the_link(app_env):
    example = gallery_example("orchard-how-many")
    best = answer(load_model(app_env["bert"]), example.passage, example.question).best
    typed = next(text for text in ("pear trees", "Saturday market", "cider")
                 if not best.overlaps(example.passage.index(text), example.passage.index(text) + len(text)))
    app = open_app(query={"ex": "orchard-how-many", "contrast": "runner-up"})
    app.text_input(key="rcqa.foil_text").input(typed).run()
    assert app.query_params["contrast"] == f"text:{typed}"
    explain(app)
    foil = shown_result(app).targets[0].foil
    assert (foil.text, foil.start_char, foil.request) == (typed, example.passage.index(typed),
                                                                   f"text:{typed}")
    reopened = open_app(query=dict(app.query_params))
    assert reopened.text_input(key="rcqa.foil_text").value == typed


def test_links_take_well_formed_foils_only():
    assert from_query({"contrast": "distractor-number"})[0].contrast == FoilSpec("distractor-number")
    assert from_query({"contrast": "off"})[0].contrast is None
    view, problems = from_query({"contrast": "nbest:x"})
    assert view.contrast is None and problems[0].startswith("Ignored contrast='nbest:x' from the link: unknown foil")
    view, problems = from_query({"contrast": "text:" + "x" * 400})
    assert view.contrast is None and "at most 300 characters" in problems[0]
    view, problems = from_query({"target": "contrast"})
    assert view.target == "span_log_prob" and problems


def test_the_dataset_page_states_the_quantifier_claim_of_a_contrast_run(tmp_path, monkeypatch):
    from tests.helpers.contrast_runs import contrast_rows
    from tests.helpers.hand_runs import MANIFEST, write_run

    folder = write_run(tmp_path / "contrast", contrast_rows(late_other=20, em_of_c=0.0),
                       {**MANIFEST, "skipped": [{"id": "d", "reason": "not a quantifier question"}]})
    monkeypatch.setenv("RCQA_RUNS", str(tmp_path))
    app = open_app("pages/dataset.py")
    app.selectbox(key="rcqa.dataset.run").set_value(str(folder.resolve())).run()
    assert not app.exception, [e.value for e in app.exception]
    shown = texts(app.markdown).replace("\\", "")
    assert "The paper's quantifier claim holds on this model under this test." in shown
    assert "1 question without such a foil was skipped." in texts(app.caption)
    chart = spec_titled(app, "Why the answer and not the foil (distractor-number)? 3 questions")
    assert {trace["name"] for trace in chart["data"]} >= {"foil words", "answer words", "lens margin (right axis)",
                                                          "other numbers (neither answer nor foil)"}


def test_a_whole_passage_contrast_explains_both_windows_and_reads_the_lens_in_each(app_env):
    example = gallery_example("canal-long")
    found = answer(load_model(app_env["bert"]), example.passage, example.question)
    rank = next(rank for rank, span in enumerate(found.nbest) if span.window != found.best.window
                and not span.overlaps(found.best.start_char, found.best.end_char))
    app = open_app(query={"ex": "canal-long", "win": "all", "contrast": f"nbest:{rank}"})
    open_tab(explain(app), "Layer roles")
    assert not app.error, texts(app.error)
    result = shown_result(app)
    assert result.whole_passage and result.targets[0].foil.window != result.window
    shown = texts(app.markdown).replace("\\", "")
    assert (f"in window {result.targets[0].foil.window + 1}, the answer in window {result.window + 1}: both "
            "are explained") in shown
    assert "On the lens the" in shown and "its logits are a constant there" not in shown


def test_a_candidate_overlapping_the_answer_is_a_boundary_contrast_whose_shared_words_are_shown(app_env):
    example = gallery_example("orchard-how-many")
    found = answer(load_model(app_env["bert"]), example.passage, example.question)
    best = found.best
    rank = next(r for r, s in enumerate(found.nbest) if s.overlaps(best.start_char, best.end_char)
                and (s.start_char, s.end_char) != (best.start_char, best.end_char))
    app = open_app(query={"ex": "orchard-how-many"})
    app.selectbox(key="rcqa.why_not").set_value(rank).run()
    open_tab(explain(app), "Layer roles")
    assert not app.error, texts(app.error)
    shown = texts(app.markdown).replace("\\", "")
    assert "The foil overlaps the answer: a boundary contrast" in shown
    names = [trace["name"] for trace in spec_titled(app, "What each layer's top-")["data"]]
    assert "shared (in the answer and the foil)" in names and "foil only" in names
