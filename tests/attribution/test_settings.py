"""ExplainSettings.from_dict reads back what to_dict writes (through JSON too), and refuses what is no setting."""
import json

import pytest

from rcqa.attribution.settings import PRESETS, ExplainSettings
from rcqa.ui.view import View, view_fields

SETTINGS = [
    ExplainSettings(),
    ExplainSettings.paper(),
    ExplainSettings.paper_text(),
    ExplainSettings(targets=("span_logits", "span_log_prob"), span="nbest:2", baseline="mask", rule="riemann_right",
               steps=16, tolerance=None, max_steps=64, memory_budget_mb=256),
    ExplainSettings(span="gold", baseline="zero", steps=4, tolerance=0.001),
    ExplainSettings(targets=("null", "answer_vs_null"), allow_null=True),
    ExplainSettings(allow_null=False),
]


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_from_dict_reads_back_to_dict_and_its_json(settings):
    assert ExplainSettings.from_dict(settings.to_dict()) == settings
    assert ExplainSettings.from_dict(json.loads(json.dumps(settings.to_dict()))) == settings


def test_a_partial_dict_keeps_the_other_defaults():
    assert ExplainSettings.from_dict({"baseline": "zero", "targets": ["span_logits"]}) == ExplainSettings(
        baseline="zero", targets=("span_logits",))
    assert ExplainSettings.from_dict({}) == ExplainSettings()


def test_unknown_keys_are_refused_by_name():
    with pytest.raises(ValueError, match=r"unknown explanation setting 'stpes'; the settings are allow_null, baseline, "):
        ExplainSettings.from_dict({**ExplainSettings().to_dict(), "stpes": 8})
    with pytest.raises(ValueError, match=r"unknown explanation settings 'a', 'b'"):
        ExplainSettings.from_dict({"b": 1, "a": 2})


def test_bad_values_are_refused_as_the_constructor_refuses_them():
    with pytest.raises(ValueError, match="a list of target names"):
        ExplainSettings.from_dict({"targets": "span_logits"})  # would otherwise become 11 one-letter targets
    with pytest.raises(ValueError, match="unknown baseline 'nope'"):
        ExplainSettings.from_dict({"baseline": "nope"})


@pytest.mark.parametrize("name", PRESETS)
def test_a_view_holds_each_preset_and_gives_it_back(name):
    settings = PRESETS[name].settings
    assert View(**view_fields(settings)).settings() == settings
