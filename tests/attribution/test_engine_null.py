"""Explaining an abstention: the null targets at every layer, complete, sharing the forward pass."""
import numpy as np
import pytest

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.model import load_model


@pytest.mark.parametrize("rule", ["gausslegendre", "riemann_right", "paper_trapezoid"])
def test_null_targets_are_complete_at_every_layer(tiny_model_dirs, rule):
    settings = ExplainSettings(targets=("null", "answer_vs_null"), rule=rule,
                          **({} if rule == "gausslegendre" else {"steps": 50, "tolerance": None}))
    result = explain(load_model(tiny_model_dirs["bert"]), gallery_example("comet-who"), settings)
    assert [t.name for t in result.targets] == ["null", "answer_vs_null"]
    assert all(t.null_token == 0 for t in result.targets)
    limit = 0.01 if rule == "gausslegendre" else 0.05
    assert all(c.relative_error <= limit for c in result.completeness), max(c.relative_error for c in
                                                                            result.completeness)


def test_answer_vs_null_is_span_log_prob_minus_null_by_the_linearity_of_ig(tiny_model_dirs):
    # one forward shared by the three targets; IG is linear in F, so the signed scores subtract exactly
    result = explain(load_model(tiny_model_dirs["bert"]), gallery_example("river-where"),
                     ExplainSettings(targets=("span_log_prob", "null", "answer_vs_null"), tolerance=None))
    span, null, contrast = (result.layer_scores("sum", t) for t in range(3))
    assert np.allclose(contrast, span - null, rtol=1e-4, atol=1e-6)
    f_inputs = {(c.layer, c.target): c.f_input for c in result.completeness}
    assert f_inputs[(0, "answer_vs_null")] == pytest.approx(f_inputs[(0, "span_log_prob")] - f_inputs[(0, "null")],
                                                             rel=1e-5, abs=1e-5)
    alone = explain(load_model(tiny_model_dirs["bert"]), gallery_example("river-where"),
                    ExplainSettings(targets=("null",), tolerance=None))
    assert np.allclose(alone.scores[0], result.scores[1], rtol=1e-4, atol=1e-6)
