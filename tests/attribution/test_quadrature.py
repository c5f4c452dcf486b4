"""Integration rules: what each integrates exactly, and Kronrod's extension reusing every Gauss node."""
import numpy as np
import pytest

from rcqa.attribution.quadrature import (
    RULES,
    adaptive,
    gauss_kronrod,
    nodes_and_weights,
)


def integrates_exactly(nodes, weights, degree):
    """Whether the rule integrates every polynomial up to degree exactly on [0, 1] (checked on the
    shifted Legendre basis, where ∫ P_d = 0 for d ≥ 1, so that errors do not hide in small moments)."""
    basis = np.polynomial.legendre.legvander(2 * nodes - 1, degree)
    return np.allclose(weights @ basis, np.eye(degree + 1)[0], atol=1e-12)


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_has_weights_summing_to_one_on_the_unit_path(rule):
    nodes, weights = nodes_and_weights(rule, 20)
    assert np.isclose(weights.sum(), 1) and nodes.min() >= 0 and nodes.max() <= 1


@pytest.mark.parametrize("points", [1, 2, 4, 7, 16, 32])
def test_gauss_kronrod_adds_points_plus_one_nodes_for_degree_3n_plus_1(points):
    gauss_nodes, gauss_weights = nodes_and_weights("gausslegendre", points)
    added, weights_at_gauss, weights_at_added = gauss_kronrod(points)
    assert len(added) == points + 1 and 0 < added.min() and added.max() < 1
    nodes = np.concatenate([gauss_nodes, added])
    weights = np.concatenate([weights_at_gauss, weights_at_added])
    assert len(np.unique(nodes.round(9))) == 2 * points + 1 and weights.min() > 0
    assert integrates_exactly(gauss_nodes, gauss_weights, 2 * points - 1)
    assert integrates_exactly(nodes, weights, 3 * points + 1)
    assert not integrates_exactly(nodes, weights, 3 * points + 3)


def test_gauss_kronrod_15_matches_quadpack():
    added, weights_at_gauss, weights_at_added = gauss_kronrod(7)
    # QUADPACK's qk15 on [-1, 1]: the Kronrod abscissae between the Gauss ones, their weights, the centre's weight
    assert np.allclose(2 * added - 1, [-0.991455371120813, -0.864864423359769, -0.586087235467691,
                                       -0.207784955007898, 0.207784955007898, 0.586087235467691,
                                       0.864864423359769, 0.991455371120813])
    assert np.allclose(2 * weights_at_added[:4], [0.022935322010529, 0.104790010322250, 0.169004726639267,
                                                  0.204432940075298])
    assert np.isclose(2 * weights_at_gauss[3], 0.209482141084728)


def test_the_papers_released_rule_is_twenty_points_k_over_20_with_trapezoid_weights():
    nodes, weights = nodes_and_weights("paper_trapezoid", 50)  # the released code always takes its 20 points
    assert np.allclose(nodes, np.arange(20) / 20)
    assert np.allclose(weights, [1 / 38] + [1 / 19] * 18 + [1 / 38])


def test_the_papers_text_rule_is_right_riemann():
    nodes, weights = nodes_and_weights("riemann_right", 4)
    assert np.allclose(nodes, [0.25, 0.5, 0.75, 1.0]) and np.allclose(weights, 0.25)


def test_two_point_gauss_legendre_on_the_unit_interval():
    nodes, weights = nodes_and_weights("gausslegendre", 2)
    assert np.allclose(nodes, [0.5 - 0.5 / np.sqrt(3), 0.5 + 0.5 / np.sqrt(3)]) and np.allclose(weights, 0.5)


def test_only_gauss_legendre_is_refined_and_unknown_rules_are_refused():
    assert [adaptive(rule) for rule in RULES] == [True, False, False]
    with pytest.raises(ValueError, match="unknown integration rule 'simpson'; choose one of gausslegendre, "
                                         "riemann_right, paper_trapezoid"):
        nodes_and_weights("simpson", 4)
