"""A view joined from another session names its charts and downloads after this session's example (issue 56).

The queue computes one job for every session that asks the same thing (the same model, text and settings: its
key holds no example id), so the value a second asker gets was computed from the first asker's example: same
passage and question, another id (a gallery example, then the same text pasted; SQuAD asks some questions twice
under two ids). Here every job the page queues is computed, in the real worker, from the first asker's example
(FirstAskers stands in for the join), and each view family's charts and downloads must carry the pasted example's
id and never the gallery's. Before: the knock-outs' chart and download names carried no example id at all
(interventions-top5-pad), and a head's attention pattern none either (head-pattern-0-0)."""
from __future__ import annotations

import json
from dataclasses import fields, is_dataclass, replace

import pytest

from rcqa.gallery import gallery_example
from rcqa.types import Example
from rcqa.ui import worker
from rcqa.ui.child import Task
from tests.helpers.app_harness import explain, open_app, open_tab, press

pytestmark = pytest.mark.usefixtures("app_env")
FIRST = gallery_example("lighthouse-when")  # the first asker's example; the second pastes its text
FAST = {"steps": "4", "tol": "off"}


def first_askers(value):
    """`value` as the first asker sent it: its example, wherever it holds one of the same text, the gallery's."""
    if isinstance(value, Example):
        return FIRST if (value.passage, value.question) == (FIRST.passage, FIRST.question) else value
    if isinstance(value, tuple):
        return tuple(first_askers(part) for part in value)
    if is_dataclass(value) and not isinstance(value, type) and "example" in {field.name for field in fields(value)}:
        return replace(value, example=first_askers(value.example))  # an explanation, an explanation's request
    return value


@pytest.fixture
def joined(monkeypatch):
    """Every job the page sends its worker computed from the first asker's example, as a joined job is."""
    def task(function, model, fingerprint, device, args=()):
        return Task(function, model, fingerprint, device, first_askers(args))

    monkeypatch.setattr(worker, "Task", task)


def pasted(page: str | None = None):
    """A session that pasted the first asker's passage and question (its example: pasted-…), on `page`."""
    app = open_app(query={"src": "paste", **FAST})
    app.text_area(key="rcqa.widget.passage").input(FIRST.passage).run()
    app.text_input(key="rcqa.widget.question").input(FIRST.question).run()
    if page:
        app.switch_page(page).run()
    return explain(app)


def names(app) -> list[str]:
    """The names the page's charts and their downloads carry: Plotly's image file name, each download's key."""
    charts = [json.loads(chart.proto.config)["toImageButtonOptions"]["filename"] for chart in app.get("plotly_chart")]
    downloads = [button.key.removeprefix("download-") for button in app.get("download_button")]
    return charts + downloads


def own_names(app, *families: str) -> None:
    """Each family has a chart on the page, and every chart and download names this session's example (a pasted
    one's id is pasted-…) and none the first asker's."""
    shown = names(app)
    for family in families:
        assert any(name.startswith(family) for name in shown), (family, shown)
    assert shown and all("pasted-" in name and FIRST.id not in name for name in shown), shown


def test_the_lens_joined_names_this_sessions_example(joined):
    app = press(open_tab(pasted(), "Answer lens"), "rcqa.ask.lens")
    own_names(app, "answer-lens-")


def test_the_knockouts_joined_name_this_sessions_example(joined):
    app = press(open_tab(pasted(), "Interventions"), "rcqa.ask.knockouts")
    own_names(app, "interventions-top5-")  # before: interventions-top5-pad, no example at all


def test_the_heads_joined_name_this_sessions_example(joined):
    app = press(open_tab(pasted(), "Attention heads"), "rcqa.ask.heads")
    own_names(app, "heads-", "head-pattern-")  # before: head-pattern-0-0


@pytest.mark.slow  # the methods' comparison, then the sanity check, through the app
def test_the_comparison_and_the_sanity_check_joined_name_this_sessions_example(joined):
    app = pasted()
    app.switch_page("pages/methods.py").run()
    press(app, "rcqa.compare_methods")
    app.multiselect(key="rcqa.sanity_methods").set_value(["gradient"]).run()
    press(app, "rcqa.ask.sanity")
    own_names(app, "methods-heatmap-", "deletion-curves-", "sanity-")


def test_an_analysis_joined_names_this_sessions_example(joined):
    app = press(pasted("pages/compare_layers.py"), "rcqa.ask.analysis.agreement")
    own_names(app, "agreement-")
