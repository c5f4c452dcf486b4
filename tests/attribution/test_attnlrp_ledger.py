"""AttnLRP read as it should be: its default target (span_logits), its conservation judged against the relevance
entering at the target with the ledger beside it, coloured by an explicit threshold, and results saved before the
ledger was kept still loading."""
import dataclasses

import numpy as np
import pytest

from rcqa import figures
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import resolve
from rcqa.gallery import gallery_example
from rcqa.types import Attribution
from rcqa.ui.view import target_label
from tests.helpers.random_weights import randomised

RED, GREEN = "#d62728", "#2ca02c"


def test_attnlrp_explains_the_span_logits_unless_asked_otherwise():
    assert resolve(method="attnlrp").targets == ("span_logits",)
    assert resolve().targets == resolve(method="integrated_gradients").targets == ("span_log_prob",)
    assert resolve(method="attnlrp", targets=["span_log_prob"]).targets == ("span_log_prob",)  # still on offer
    assert resolve("paper-code", method="attnlrp").targets == ("paper_confidence",)  # a preset's own F stays


def test_the_target_choice_says_what_enters_attnlrps_rules():
    assert "z_s − E_p[z]" in target_label("span_log_prob", "attnlrp") and "H(p_start)" in target_label(
        "span_log_prob", "attnlrp")
    assert "E_p" not in target_label("span_log_prob", "integrated_gradients")
    assert target_label("span_logits", "attnlrp") == target_label("span_logits", "integrated_gradients")


@pytest.fixture(scope="module")
def qa_model(tiny_bert):
    """The tiny BERT with random biases (a private copy), so that its rules absorb what a trained model's would."""
    return dataclasses.replace(tiny_bert, model=randomised(tiny_bert.model))


@pytest.fixture(scope="module")
def result(qa_model) -> Attribution:
    settings = resolve(method="attnlrp", targets=["span_logits", "span_log_prob"])
    return explain(qa_model, gallery_example("lighthouse-who"), settings)


def test_conservation_is_judged_against_the_entering_relevance_and_coloured_by_the_threshold(result):
    checks = {(c.layer, c.target): c for c in result.completeness}
    for check in checks.values():
        # the error is |Σ relevance − entering| / |entering|, worked out here from the fields
        assert check.relative_error == pytest.approx(abs(check.attribution_sum - check.entering) / abs(check.entering))
        assert abs(check.unaccounted) <= 1e-4 * abs(check.entering)
    # a sum of logits enters as itself; a log-probability does not (its gap is −H(p) < 0)
    assert checks[0, "span_logits"].entering == pytest.approx(checks[0, "span_logits"].f_input)
    assert checks[0, "span_log_prob"].f_input < checks[0, "span_log_prob"].entering
    chart = figures.completeness(result)
    bars = [trace for trace in chart.figure.data if trace.type == "bar"]
    errors = [c.relative_error for c in result.completeness if c.target == "span_logits"]
    assert list(bars[0].marker.color) == [RED if e > 0.01 else GREEN for e in errors]
    assert RED in bars[0].marker.color  # not always green: random biases absorb more than 1 %
    assert [line.y0 for line in chart.figure.layout.shapes] == [1.0]  # the 1 % threshold, drawn
    assert any("threshold: 1% of the entering relevance" == trace.name for trace in chart.figure.data)


def test_the_ledger_gives_each_rules_share_per_layer_and_adds_up(qa_model, result):
    chart = figures.conservation_ledger(result, 0)
    data = chart.data
    shares = data[[f"{kind}_pct" for kind in figures.layers.ABSORBING_RULES]].sum(axis=1)
    # entering − Σ absorbed = Σ relevance, as shares: 100 % − Σ shares − relevance = unaccounted
    np.testing.assert_allclose(100 - shares - data.relevance_pct, data.unaccounted_pct, atol=1e-9)
    np.testing.assert_allclose(data.unaccounted_pct, 0, atol=1e-2)
    # above the last block only the QA head's two biases absorb: by the ε-rule, each its own value
    bias = qa_model.model.qa_outputs.bias.detach()
    entering = result.completeness[0].entering
    assert data.linear_pct.iloc[-1] == pytest.approx(100 * float(bias[0] + bias[1]) / entering, abs=1e-4)
    assert data.softmax_pct.iloc[-1] == data.layer_norm_pct.iloc[-1] == 0
    table = chart.figure.data[0]
    error_fill = table.cells.fill.color[2]  # the conservation error's column
    assert list(error_fill) == ["#f8d7da" if e > 1 else "#dff0d8" for e in data.conservation_error_pct]
    assert "F − entering" in chart.figure.layout.title.subtitle.text.replace("<br>", " ")


def test_a_result_saved_before_the_ledger_loads_and_is_checked_against_f(result):
    document = result.to_dict()
    for check in document["completeness"]:
        del check["entering"], check["absorbed"]
    older = Attribution.from_dict(document)
    for check in older.completeness:
        assert check.entering is None and check.unaccounted is None
        assert check.relative_error == pytest.approx(abs(check.attribution_sum - check.f_input) / abs(check.f_input))
    assert figures.conservation_ledger(older, 0) is None
    subtitle = figures.completeness(older).figure.layout.title.subtitle.text.replace("<br>", " ")
    assert "|Σ relevance − F| / |F|: this result was saved before the entering relevance was kept" in subtitle
    assert Attribution.from_dict(result.to_dict()).completeness == result.completeness
