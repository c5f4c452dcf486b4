"""The settings' front door: a span and a foil parsed once into typed specs (refused at once, in one sentence),
their string forms kept, and resolve(preset, **overrides) as the API, the CLI and the dashboard use it."""
import pytest

import rcqa
from rcqa.attribution.settings import PRESETS, FoilSpec, ExplainSettings, SpanSpec, resolve
from rcqa.cli import main
from rcqa.ui.view import View, from_query


@pytest.mark.parametrize("span, spec", [("predicted", SpanSpec("predicted")), ("gold", SpanSpec("gold")),
                                        ("nbest:0", SpanSpec("nbest", 0)), ("nbest:19", SpanSpec("nbest", 19))])
def test_every_span_form_parses_and_round_trips(span, spec):
    assert SpanSpec.parse(span) == spec and spec.to_string() == span and str(spec) == span
    settings = ExplainSettings(span=span)
    assert settings.span == spec and settings.to_dict()["span"] == span
    assert ExplainSettings.from_dict(settings.to_dict()).span == spec


@pytest.mark.parametrize("span", ["best", "Gold", "nbest:", "nbest:-1", "nbest:x", "nbest:1000", "nbest:²",
                                  "predicted:1", "x" * 5000])
def test_a_bad_span_is_refused_as_the_settings_are_made_in_one_sentence(span):
    with pytest.raises(ValueError, match=r"^unknown span '.{0,40}'; use predicted, gold or nbest:K") as refused:
        ExplainSettings(span=span)
    message = str(refused.value)
    assert "\n" not in message and len(message) < 200 and message.count(". ") == 0


@pytest.mark.parametrize("foil, spec", [("nbest:0", FoilSpec("nbest", rank=0)), ("nbest:12", FoilSpec("nbest", rank=12)),
                                        ("gold", FoilSpec("gold")), ("null", FoilSpec("null")),
                                        ("runner-up", FoilSpec("runner-up")),
                                        ("distractor-number", FoilSpec("distractor-number")),
                                        ("text:3,750", FoilSpec("text", text="3,750")),
                                        ("text:a: b", FoilSpec("text", text="a: b")),
                                        ("text:Zürich", FoilSpec("text", text="Zürich"))])
def test_every_foil_form_round_trips_through_its_spec_and_the_settings_json(foil, spec):
    assert FoilSpec.parse(foil) == spec and spec.to_string() == foil
    assert FoilSpec.parse(spec.to_string()) == spec
    settings = ExplainSettings(contrast=foil)
    assert settings.contrast == spec and settings.to_dict()["contrast"] == foil
    assert ExplainSettings.from_dict(settings.to_dict()).contrast == spec
    assert ExplainSettings().contrast is None and "contrast" not in ExplainSettings().to_dict()


@pytest.mark.parametrize("kind, fields", [("nbest", {}), ("gold", {"rank": 1}), ("text", {}),
                                          ("text", {"text": " "}), ("gold", {"text": "x"}), ("runnerup", {})])
def test_a_spec_is_validated_when_it_is_constructed(kind, fields):
    with pytest.raises(ValueError, match="foil"):
        FoilSpec(kind, **fields)


def test_a_span_spec_is_validated_when_it_is_constructed():
    for kind, rank in (("gold", 2), ("nbest", -1), ("best", 0)):
        with pytest.raises(ValueError, match="span"):
            SpanSpec(kind, rank)


def test_resolve_gives_each_presets_settings():
    # the paper's released code (EMNLP 2020): zero baseline, 20 points k/20 with the trapezoid, its confidence F
    paper = resolve("paper-code")
    assert (paper.targets, paper.baseline, paper.rule, paper.steps, paper.tolerance) == \
        (("paper_confidence",), "zero", "paper_trapezoid", 20, None)
    text = resolve("paper-text")  # the paper's text: 50 right-Riemann steps
    assert (text.targets, text.baseline, text.rule, text.steps, text.tolerance) == \
        (("paper_confidence",), "zero", "riemann_right", 50, None)
    assert resolve() == resolve("default") == ExplainSettings()


def test_overrides_win_and_the_rest_stays_the_presets():
    chosen = resolve("paper-text", steps=30, span="gold", contrast="runner-up", targets=["span_logits"])
    assert (chosen.steps, chosen.span, chosen.contrast, chosen.targets) == \
        (30, SpanSpec("gold"), FoilSpec("runner-up"), ("span_logits",))
    assert (chosen.baseline, chosen.rule, chosen.tolerance) == ("zero", "riemann_right", None)


def test_an_unknown_setting_or_preset_is_refused_by_name():
    with pytest.raises(ValueError, match=r"unknown explanation setting 'step'; the settings are .*steps"):
        resolve("default", step=4)
    with pytest.raises(ValueError, match=r"unknown preset 'papers'; choose one of default, paper-code, paper-text"):
        resolve("papers")


def test_the_api_refuses_a_bad_span_before_it_loads_a_model():
    with pytest.raises(ValueError, match="unknown span 'best'"):  # no model by this name exists either
        rcqa.explain("no/such-model", "A passage.", "A question?", span="best")


def test_the_cli_refuses_a_bad_span_in_one_line(capsys, tmp_path):
    passage = tmp_path / "passage.txt"
    passage.write_text("A passage.")
    status = main(["explain", "--model", "no/such-model", "--passage-file", str(passage), "--question", "Why?",
                   "--span", "nbest:two", "--json", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: unknown span 'nbest:two'") and err.count("\n") == 1


def test_a_new_view_explains_with_the_default_preset():
    assert View().settings() == PRESETS["default"].settings
    assert View().aggregation == PRESETS["default"].aggregation


def test_a_link_with_a_bad_foil_falls_back_with_one_sentence():
    view, problems = from_query({"contrast": "nbest:x"})
    assert view.contrast is None and len(problems) == 1 and "unknown foil 'nbest:x'" in problems[0]
    view, problems = from_query({"contrast": "text:Zürich"})
    assert view.contrast == FoilSpec("text", text="Zürich") and not problems
