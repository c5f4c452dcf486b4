"""Every explain setting survives the records it travels in, walked exhaustively over each field's legal values
from the defaults: the result's JSON (to_dict → from_dict, through json, beside the windowing as a result file holds
them, and through resolve, which every front uses), a dashboard link (settings → View → URL → View → settings) and
a dataset run's record opened in Explore (manifest → View → settings)."""
import json
from dataclasses import fields

import pytest

from rcqa.attribution.layerwise import LAYERWISE_METHODS
from rcqa.attribution.settings import BASELINES, FOILS, ExplainSettings, resolve
from rcqa.attribution.targets import TARGETS
from rcqa.dataset.manifest import RunAnalysis
from rcqa.types.settings import RULES, WINDOWS, Windowing, split_recorded_settings
from rcqa.ui.view import TOLERANCES, View, from_query, to_query, view_fields

PICKABLE = [name for name in TARGETS if name != "contrast"]  # a contrast is asked for by its foil
LEGAL = {  # each field's legal values (a foil's and a span's in their string forms, as records write them)
    "targets": [(name,) for name in PICKABLE] + [("span_logits", "span_log_prob"), ("start_logit", "end_logit")],
    "span": ["predicted", "gold", "nbest:0", "nbest:7"],
    "baseline": list(BASELINES),
    "rule": list(RULES),
    "steps": [1, 8, 127],
    "tolerance": [None, 0.001, 0.05],
    "max_steps": [128, 300],
    "memory_budget_mb": [16, 512, 1024],
    "allow_null": [None, True, False],
    "contrast": [None, "nbest:1", "gold", "null", "text:a: b", "runner-up", "distractor-number"],
    "windows": list(WINDOWS),
    "method": list(LAYERWISE_METHODS),
}


def one_field_changed():
    """The default settings with one field at each of its legal values (those a method refuses left out)."""
    for name, values in LEGAL.items():
        for value in values:
            try:
                yield name, resolve(**{name: value})
            except ValueError:  # e.g. AttnLRP over the whole passage: refused, so never recorded
                continue


WALK = list(one_field_changed())


def test_the_walk_covers_every_field_and_every_foil_kind():
    assert {name for name, _ in WALK} == {f.name for f in fields(ExplainSettings)}
    assert {kind.partition(":")[0] for kind in FOILS} <= {s.contrast.kind for _, s in WALK if s.contrast}


@pytest.mark.parametrize("field, settings", WALK, ids=[f"{n}={getattr(s, n)}" for n, s in WALK])
def test_every_setting_survives_a_result_file(field, settings):
    recorded = json.loads(json.dumps({**settings.to_dict(), **Windowing(384, 128).to_dict()}))
    assert split_recorded_settings(recorded) == (settings, Windowing(384, 128))
    assert ExplainSettings.from_dict(json.loads(json.dumps(settings.to_dict()))) == settings
    assert resolve(**settings.to_dict()) == settings


LINKED = [(name, settings) for name, settings in WALK
          if settings.tolerance in TOLERANCES  # the tolerances a link offers
          and settings.targets != ("span_logits", "span_log_prob")]  # a view explains one target, its ends apart or not


def test_the_link_leaves_out_only_what_a_view_cannot_hold():
    assert {name for name, _ in LINKED} == {f.name for f in fields(ExplainSettings)}


@pytest.mark.parametrize("field, settings", LINKED, ids=[f"{n}={getattr(s, n)}" for n, s in LINKED])
def test_every_setting_survives_a_link(field, settings):
    linked, problems = from_query(to_query(View(**view_fields(settings))))
    assert not problems
    assert linked.settings() == settings


@pytest.mark.parametrize("field, settings", LINKED, ids=[f"{n}={getattr(s, n)}" for n, s in LINKED])
def test_every_setting_survives_a_run_opened_in_explore(field, settings):
    """A run's manifest records its settings as a result does; Explore opens the run's question with them
    (rcqa.ui.runs), so its result is found under the run's own key."""
    analysis = RunAnalysis.from_dict(json.loads(json.dumps(
        {"preset": "default", "settings": {**settings.to_dict(), **Windowing(384, 128).to_dict()},
         "aggregation": "l2", "top_k": 5})))
    recorded, _ = analysis.explained_with()
    assert View(**view_fields(recorded)).settings() == settings


def test_a_link_may_lower_the_memory_a_batch_takes_but_never_raise_it():
    view, problems = from_query({"mem": "4096"})
    assert view.memory_budget_mb == 1024 and problems == ["Ignored mem='4096' from the link: must be a whole number "
                                                          "from 16 to 1024."]
    view, problems = from_query({"maxsteps": "64", "steps": "100"})  # steps are read against the link's max_steps
    assert (view.max_steps, view.steps) == (64, 8)
    assert problems == ["Ignored steps='100' from the link: steps must be between 1 and max_steps (64)."]
