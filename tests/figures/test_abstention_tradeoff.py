"""The abstention trade-off on the Model page: the chart holds the curve's numbers, and each sentence reads them."""
import pytest

from rcqa.evaluate import best_abstention_above
from rcqa.figures import abstention_tradeoff_chart, abstention_tradeoff_sentences


def _row(model: str, curve: list[dict], threshold: float | None, floor: float = 80.0) -> dict:
    row = {"model": model, "curve": curve, "stops": best_abstention_above(curve, floor), "threshold": threshold}
    if threshold is not None:
        row["at_threshold"] = max((p for p in curve if p["threshold"] <= threshold), key=lambda p: p["threshold"])
    return row


def _point(threshold: float, abstained: int, f1: float, of: int = 20) -> dict:
    return {"threshold": threshold, "abstained": abstained, "of": of, "abstained_by_kind": {}, "HasAns_f1": f1}


OLD = [_point(-3.0, 20, 0.0), _point(-1.0, 12, 70.0), _point(0.0, 8, 86.0), _point(2.0, 0, 90.0)]
NEW = [_point(-3.0, 20, 0.0), _point(-1.0, 16, 84.0), _point(0.5, 15, 85.5), _point(2.0, 1, 90.0)]


def _tradeoff(difference: dict) -> dict:
    return {"file": "hard.json", "kinds": ["antonym", "entity_swap"], "floor": 85.0,
            "models": [_row("old", OLD, -0.5, 85.0), _row("new", NEW, 1.0, 85.0)],
            "compared": [{"model": "new", "against": "old", "abstained_difference": difference,
                          "only_model": 8, "only_against": 1, "mcnemar_p": 0.04}]}


def test_the_chart_holds_every_point_of_every_curve_and_marks_each_tuned_threshold():
    chart = abstention_tradeoff_chart(_tradeoff({"mean": 0.35, "low": 0.1, "high": 0.55, "n": 20}))
    assert list(chart.data["model"]) == ["old"] * 4 + ["new"] * 4
    assert list(chart.data["abstained %"]) == [100.0, 60.0, 40.0, 0.0, 100.0, 80.0, 75.0, 5.0]
    assert list(chart.data["HasAns F1"]) == [0.0, 70.0, 86.0, 90.0, 0.0, 84.0, 85.5, 90.0]
    # the tuned thresholds: old's -0.5 decides as the point at -1.0, new's 1.0 as the point at 0.5
    assert list(chart.data[chart.data["tuned threshold"]]["threshold"]) == [-1.0, 0.5]
    lines = [trace for trace in chart.plotly.data if trace.mode == "lines+markers"]
    assert [list(trace.y) for trace in lines] == [[100.0, 60.0, 40.0, 0.0], [100.0, 80.0, 75.0, 5.0]]
    stars = [trace for trace in chart.plotly.data if trace.mode == "markers"]
    assert [(list(t.x), list(t.y)) for t in stars] == [([70.0], [60.0]), ([85.5], [75.0])]


def test_the_sentences_read_where_each_curve_stops_and_where_its_threshold_stands():
    sentences = abstention_tradeoff_sentences(_tradeoff({"mean": 0.35, "low": 0.1, "high": 0.55, "n": 20}))
    assert sentences[0] == ("old: at most 8 of 20 abstained on with answerable F1 86.00 (≥ 85); at its tuned "
                            "threshold (-0.500) 12 of 20, answerable F1 70.00.")
    assert sentences[1] == ("new: at most 15 of 20 abstained on with answerable F1 85.50 (≥ 85); at its tuned "
                            "threshold (1.000) 15 of 20, answerable F1 85.50.")


def test_a_comparison_is_told_apart_only_where_its_paired_interval_excludes_zero():
    apart = abstention_tradeoff_sentences(_tradeoff({"mean": 0.35, "low": 0.1, "high": 0.55, "n": 20}))[-1]
    assert apart.startswith("At their tuned thresholds new abstains on 7 more of the 20 than old (paired 95 % "
                            "interval +2.0 to +11.0 questions; 8 abstained on by new only, 1 by old only; exact McNemar "
                            "p 0.04).")
    level = abstention_tradeoff_sentences(_tradeoff({"mean": 0.05, "low": -0.1, "high": 0.2, "n": 20}))[-1]
    assert "new is not told apart from old (+1 of the 20)" in level and "more" not in level
    fewer = abstention_tradeoff_sentences(_tradeoff({"mean": -0.25, "low": -0.45, "high": -0.05, "n": 20}))[-1]
    assert "new abstains on 5 fewer of the 20 than old" in fewer


def test_a_model_no_threshold_of_which_keeps_the_floor_says_so():
    curve = [_point(-1.0, 2, 0.0, of=2), _point(0.0, 0, 50.0, of=2)]
    tradeoff = {"kinds": ["antonym"], "floor": 85.0, "models": [_row("weak", curve, None, 85.0)], "compared": []}
    assert abstention_tradeoff_sentences(tradeoff) == ["weak: no threshold keeps answerable F1 at 85."]


def test_a_label_from_a_card_is_escaped_in_the_chart():
    tradeoff = {"kinds": ["antonym"], "floor": 85.0, "models": [_row("<b>x</b>", OLD, None)], "compared": []}
    assert abstention_tradeoff_chart(tradeoff).plotly.data[0].name == "&lt;b&gt;x&lt;/b&gt;"


@pytest.mark.parametrize("kinds, title", [(["antonym", "entity_swap"], "antonyms and entity swaps"),
                                          (["negation"], "negations")])
def test_the_title_names_the_kinds_counted(kinds, title):
    tradeoff = {"kinds": kinds, "floor": 85.0, "models": [_row("m", OLD, None)], "compared": []}
    assert title in abstention_tradeoff_chart(tradeoff).plotly.layout.title.text
