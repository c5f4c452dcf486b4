"""What the methods' comparison costs before it runs: the passes and variants counted by hand, priced as the
explanation's cost model prices a pass."""
import pytest

from rcqa.attribution.cost import MULTIPLY_ADDS_PER_TOKEN_BLOCK, SPEED_ENV
from rcqa.attribution.methods import COMPARED
from rcqa.attribution.settings import ExplainSettings
from rcqa.faithfulness.compare import Protocol
from rcqa.faithfulness.cost import comparison_seconds, deletion_variants, passes_after_each, scoring_passes
from rcqa.faithfulness.summaries import SUMMARIES


def test_scoring_counts_each_shared_pass_once_and_ig_by_its_expected_points():
    adaptive = ExplainSettings(steps=8, tolerance=0.01)  # the adaptive rule's 8 steps grown 1.5 times: 12 points
    # recording forward 1/3 + the embeddings' gradient once (gradient, gradient × input) 1 + IG 12 + AttnLRP 1
    # + the attention maps once (tracing, rollout) 1/3 + random 0
    assert scoring_passes(adaptive, COMPARED) == pytest.approx(1 / 3 + 1 + 12 + 1 + 1 / 3)
    assert scoring_passes(adaptive, ["gradient", "gradient_x_input"]) == pytest.approx(1 / 3 + 1)
    assert scoring_passes(ExplainSettings(steps=20, tolerance=None, rule="riemann_right"), ["integrated_gradients"]) == \
        pytest.approx(1 / 3 + 20)


def test_the_passes_spent_after_each_method_count_a_shared_pass_where_it_is_first_computed():
    adaptive = ExplainSettings(steps=8, tolerance=0.01)
    # the recording forward 1/3, then: gradient 1 (the embeddings' gradient), gradient × input 0 (the same), IG 12,
    # AttnLRP 1, tracing 1/3 (the attention maps), rollout 0 (the same), random 0
    assert passes_after_each(adaptive, [*COMPARED, "random"]) == pytest.approx(
        [4 / 3, 4 / 3, 40 / 3, 43 / 3, 44 / 3, 44 / 3, 44 / 3])


def test_the_variants_are_every_rankings_curve_fractions_and_bins_the_summaries_own_and_the_naopc_search():
    # 9 rankings of the 6 methods (3 have two) + 5 random draws, each k = 0..10, 5 fractions, 5 bins deleted and kept,
    # and the re-answers each summary declares of its own per ranking
    own = sum(summary.variants for summary in SUMMARIES.values())
    assert deletion_variants(COMPARED, 5, 10, 5, 5, 0, 120) == 14 * (11 + 5 + 10 + own)
    assert deletion_variants(["gradient"], 2, 3, 1, 2, 1, 50) == 3 * (4 + 1 + 4 + own) + 2 * 1 * 50 * 3


def test_the_comparison_is_priced_at_the_servers_speed(tiny_bert, monkeypatch):
    monkeypatch.setenv(SPEED_ENV, "1e-9")
    protocol, settings = Protocol(), ExplainSettings(steps=8, tolerance=0.01)
    own = sum(summary.variants for summary in SUMMARIES.values())
    passes = (1 / 3 + 1 + 12 + 1 + 1 / 3) + (14 * (26 + own)) / 3
    width, blocks = tiny_bert.config.hidden_size, tiny_bert.num_layers
    expected = passes * blocks * 100 * MULTIPLY_ADDS_PER_TOKEN_BLOCK * width ** 2 * 1e-9
    assert comparison_seconds(tiny_bert, settings, COMPARED, protocol, 100) == pytest.approx(expected)
