"""The cost model of an explanation (rcqa.attribution.cost), and the dashboard refusing what is over its budget."""
import re

import pytest

from rcqa.attribution.cost import (Cost, expected_points, explanation_cost, in_words, model_width, server_speed)
from rcqa.attribution.settings import PRESETS, ExplainSettings
from rcqa.cli import build_parser
from rcqa.model import load_model
from rcqa.ui.capacity import JOB_BUDGET_SECONDS, job_budget
from tests.helpers.app_harness import open_app


def assert_the_whole_passage_is_explained_offline(refusal: str) -> None:
    """The refusal names the CLI's explain and a dataset run, each over every window, as commands the CLI takes."""
    commands = re.findall(r"`python -m rcqa ([^`]+)`", refusal)
    assert [command.split()[0] for command in commands] == ["explain", "reproduce"]
    for command in commands:
        parsed = build_parser().parse_args(command.split())
        assert parsed.windows == "all"


def test_the_work_is_windows_tokens_block_passes_points_targets_and_the_widths_square():
    # by hand: 2 windows × 10 tokens × (2 + 1 + 0 = 3 block passes over 3 layer outputs) × 4 points × 1 target
    # × 36 × 8² = 552,960 multiply-adds
    cost = Cost(windows=2, tokens=10, blocks=2, points=4, targets=1, width=8)
    assert cost.block_passes == 3 and cost.multiply_adds == 552_960
    assert cost.seconds(1e-6) == pytest.approx(0.55296)


def test_the_expected_points_are_a_fixed_rules_steps_or_the_adaptive_rules_grown_within_its_maximum():
    assert expected_points(ExplainSettings(steps=20, tolerance=None)) == 20
    assert expected_points(PRESETS["paper-code"].settings) == 20  # the paper's 20-point trapezoid
    assert expected_points(ExplainSettings()) == 12  # 8 Gauss–Legendre points grown by the measured 1.5
    assert expected_points(ExplainSettings(steps=120, max_steps=128)) == 128


def test_attnlrp_costs_one_pass_through_every_block(tiny_bert):
    lrp = explanation_cost(tiny_bert, ExplainSettings(method="attnlrp"), windows=1, tokens=100)
    blocks, width = tiny_bert.num_layers, model_width(tiny_bert)
    # L block passes of 100 tokens, after the answer's forward through the L blocks (a third of a pass each)
    assert lrp.multiply_adds == pytest.approx(100 * blocks * (1 + 1 / 3) * 36 * width ** 2)


def test_durations_read_as_a_person_says_them():
    assert [in_words(s) for s in (3, 44, 180, 3900, 7200)] == [
        "a few seconds", "about 40 seconds", "about 3 minutes", "about 1 hour 5 minutes", "about 2 hours"]


def test_the_default_budget_refuses_a_whole_128_window_passage_and_keeps_a_gallery_answer(monkeypatch):
    for name in ("RCQA_JOB_BUDGET_S", "RCQA_SECONDS_PER_MULTIPLY_ADD"):
        monkeypatch.delenv(name, raising=False)
    qa_model = load_model()
    assert job_budget() == JOB_BUDGET_SECONDS and model_width(qa_model) == 384 and qa_model.num_layers == 6
    whole = explanation_cost(qa_model, ExplainSettings(windows="all"), windows=128, tokens=qa_model.max_len)
    # priced about 28 minutes at the default speed; canal-long's two 384-token windows took 20 s (docs/serving.md)
    assert whole.seconds() > 5 * job_budget()
    one_window = explanation_cost(qa_model, ExplainSettings(), windows=1, tokens=qa_model.max_len)
    assert one_window.seconds() < job_budget() / 5
    assert whole.seconds() == pytest.approx(128 * one_window.seconds())
    monkeypatch.setenv("RCQA_SECONDS_PER_MULTIPLY_ADD", "1e-12")  # a faster server, as its operator measured
    assert server_speed() == 1e-12 and whole.seconds() == pytest.approx(whole.multiply_adds * 1e-12)


@pytest.mark.usefixtures("app_env")
def test_explore_says_how_long_an_explanation_takes_and_refuses_one_over_the_budget(monkeypatch):
    monkeypatch.setenv("RCQA_JOB_BUDGET_S", "1e9")
    # 11 steps: settings no other test explains, so that no result in the session's cache stands in for the job
    app = open_app(query={"ex": "canal-long", "win": "all", "steps": "11"})
    assert any(str(caption.value).endswith("on this server.") for caption in app.caption)
    monkeypatch.setenv("RCQA_SECONDS_PER_MULTIPLY_ADD", "1")  # every job takes ages here
    monkeypatch.setenv("RCQA_JOB_BUDGET_S", "120")
    app.run()
    assert not [b for b in app.button if b.key == "rcqa.explain"]
    (refusal,) = [w.value for w in app.warning if "on this server" in w.value]
    assert refusal.startswith("This explanation would take about ") and (
        "more than the 2 minutes it allows one job: explain the answer's window only (Windows explained); " in refusal)
    assert_the_whole_passage_is_explained_offline(refusal)
    app.query_params["win"] = "answer"
    app.radio(key="rcqa.widget.windows").set_value("answer").run()
    (refusal,) = [w.value for w in app.warning if "on this server" in w.value]
    assert refusal.endswith("choose fewer steps, or a preset with fewer.")


@pytest.mark.usefixtures("app_env")
def test_side_by_side_refuses_both_explanations_over_the_budget_and_queues_nothing(monkeypatch):
    monkeypatch.setenv("RCQA_SECONDS_PER_MULTIPLY_ADD", "1")
    monkeypatch.setenv("RCQA_JOB_BUDGET_S", "120")
    app = open_app(query={"ex": "orchard-how-many", "vs": "gold", "steps": "11"}, page="pages/side_by_side.py")
    app.button(key="rcqa.explain_pair").click().run()
    assert not app.exception, [e.value for e in app.exception]
    refusals = [w.value for w in app.warning if "on this server" in w.value]
    assert refusals and all(r.endswith("choose fewer steps, or a preset with fewer.") for r in refusals)
    assert not [key for key in app.session_state if str(key).startswith("rcqa.ticket")]  # nothing was queued
