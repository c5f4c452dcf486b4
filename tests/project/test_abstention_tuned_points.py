"""reports/abstention/hand-written-tradeoff.json's tuned points against the thresholds docs/abstention.md names.

A tuned model's row holds `threshold`, the threshold its card tunes (the manual's −0.415, −1.153, −1.545), and
`at_threshold`, the curve's point that makes the same decisions (docs/cli.md): the curve has one point per
threshold at which a decision changes, so the tuned threshold decides as the last point at or below it, whose own
`threshold` is that point's (−0.708, −1.177, −2.211), not the tuned one. Checked here from the curve itself, with
the counts the manual quotes at each tuned threshold."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRADEOFF = json.loads((ROOT / "reports" / "abstention" / "hand-written-tradeoff.json").read_text(encoding="utf-8"))
MANUAL = " ".join((ROOT / "docs" / "abstention.md").read_text(encoding="utf-8").split())
TUNED = {row["model"]: row for row in TRADEOFF["models"] if row.get("threshold") is not None}
STAGES = {"second stage": "second stage", "third stage": "third stage", "fourth stage, tuned": "fourth stage"}


def named_thresholds() -> dict[str, float]:
    """The tuned thresholds the manual's antonym table names in its header: "second stage (−1.153)" …"""
    found = re.search(r"\| (second stage) \((−[\d.]+)\) \| (third stage) \((−[\d.]+)\) \| (fourth stage) \((−[\d.]+)\) \|",
                      MANUAL)
    assert found, "docs/abstention.md no longer names each stage's tuned threshold in the antonym table's header"
    parts = found.groups()
    return {parts[i]: float(parts[i + 1].replace("−", "-")) for i in range(0, 6, 2)}


def test_the_tuned_models_are_the_three_stages_the_manual_names():
    assert sorted(TUNED) == sorted(STAGES)


@pytest.mark.parametrize("model", sorted(STAGES))
def test_a_tuned_rows_threshold_is_the_one_the_manual_names(model):
    assert round(TUNED[model]["threshold"], 3) == named_thresholds()[STAGES[model]]


def test_the_shipped_models_tuned_threshold_is_its_cards():
    card = json.loads((ROOT / "rcqa" / "default_squad2_model" / "rcqa_card.json").read_text(encoding="utf-8"))
    assert TUNED["third stage"]["threshold"] == card["no_answer"]["threshold"]
    assert card["abstention_tradeoff"] == TRADEOFF  # the card keeps the report's curves as they are


@pytest.mark.parametrize("model", sorted(STAGES))
def test_at_threshold_is_the_curve_point_that_decides_as_the_tuned_threshold(model):
    row = TUNED[model]
    threshold, at = row["threshold"], row["at_threshold"]
    assert at in row["curve"]
    below = [point for point in row["curve"] if point["threshold"] <= threshold]
    above = [point for point in row["curve"] if point["threshold"] > threshold]
    assert at == max(below, key=lambda point: point["threshold"])
    # no decision changes between the point and the tuned threshold: the next point lies above the threshold
    assert at["threshold"] <= threshold < min(point["threshold"] for point in above)
    # abstaining only grows as the threshold falls: the point's count is the tuned threshold's
    assert all(point["abstained"] >= at["abstained"] for point in below)
    assert all(point["abstained"] <= at["abstained"] for point in above)


def test_the_manuals_counts_at_the_tuned_thresholds_are_the_points():
    at = {model: TUNED[model]["at_threshold"] for model in STAGES}
    assert at["second stage"]["abstained"] == at["third stage"]["abstained"] == 6
    assert f"(each abstains on {at['third stage']['abstained']} of the {at['third stage']['of']}," in MANUAL
    fourth = at["fourth stage, tuned"]
    assert (f"(tuned to {TUNED['fourth stage, tuned']['threshold']:.3f}, it abstains on {fourth['abstained']} of the "
            f"{fourth['of']}: {fourth['abstained'] - at['third stage']['abstained']} more").replace("-", "−") in MANUAL
