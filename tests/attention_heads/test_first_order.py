"""The first-order estimate of a head's knock-out, −∂F/∂g at g = 1, against references computed apart from rcqa's
gates: torch.autograd.grad of F through a scale s on the head's slice of the context entering the attention output
projection (a forward pre-hook on a float64 deep copy; s = 0 is the zero fill's knock-out), and the sign by hand: a
one-sided finite difference towards the knock-out, (F(s = 1 − ε) − F(s = 1)) / ε, is about the estimate. Then that
it costs no pass of its own, and that the agreement, the grid's reading and the pruning curve read it as a
predicted change in F (Δ itself), on grids worked out by hand."""
import copy
import itertools
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import rcqa.attention_heads.gradient as gradient
import rcqa.attention_heads.pruning as pruning
from rcqa.attention_heads import head_case, knock_out_heads, pruning_curve, score_case, span_log_likelihood
from rcqa.attention_heads.cost import heads_passes
from rcqa.figures.heads import head_grid, score_reading
from rcqa.gallery import GALLERY
from tests.attention_heads.test_result import hand_made
from tests.helpers.scaled_models import scaled_copy

EXAMPLE = GALLERY[0]
FAMILIES = ("bert", "albert")  # a projection of its own at each block, and ALBERT's one shared by every depth
PROJECTION_NAMES = ("attention.output.dense", "attention.dense")  # BERT's and ALBERT's, named by hand


@pytest.fixture(scope="module", params=FAMILIES)
def family(request, tiny_model_dirs, tmp_path_factory):
    """The tiny model with its weight matrices scaled up, so that its heads move F (tests.helpers.scaled_models)."""
    qa_model = scaled_copy(tiny_model_dirs[request.param], tmp_path_factory.mktemp("first-order") / request.param)
    return qa_model, head_case(qa_model, EXAMPLE.passage, EXAMPLE.question)


def log_likelihood(qa_model, case, layer, head, scale: torch.Tensor) -> torch.Tensor:
    """F of a float64 deep copy in which the head's slice of the context entering the `layer`-th call of an attention
    output projection is multiplied by `scale`."""
    model = copy.deepcopy(qa_model.model).double()
    head_dim = model.config.hidden_size // model.config.num_attention_heads
    mask = torch.zeros(model.config.hidden_size, dtype=torch.float64)
    mask[head * head_dim:(head + 1) * head_dim] = 1
    calls = itertools.count()

    def edit(module, args):
        return (args[0] * (1 + (scale - 1) * mask),) if next(calls) == layer else None

    for name, module in model.named_modules():
        if name.endswith(PROJECTION_NAMES):
            module.register_forward_pre_hook(edit)
    output = model(**case.inputs)
    return span_log_likelihood(output.start_logits, output.end_logits, case.span)[0]


def test_the_estimate_is_minus_the_derivative_of_f_along_the_heads_scale_and_points_to_the_knock_out(family):
    qa_model, case = family
    found = score_case(qa_model, EXAMPLE, case)
    estimate = found.scores["first_order"]
    knocked = knock_out_heads(qa_model, case).delta_log_likelihood
    assert np.abs(knocked).max() > 1e-3 and np.abs(estimate).max() > 1e-3  # effects a wrong sign would show in
    epsilon = 1e-7  # in float64, F's rounding and its curvature over ε stay far under the tolerance
    for layer, head in itertools.product(range(estimate.shape[0]), range(estimate.shape[1])):
        scale = torch.ones((), dtype=torch.float64, requires_grad=True)
        (derivative,) = torch.autograd.grad(log_likelihood(qa_model, case, layer, head, scale), scale)
        assert estimate[layer, head] == pytest.approx(-float(derivative), rel=1e-3, abs=1e-5)
        # the sign: moving the gate from 1 towards the knock-out's 0 changes F by ε times −∂F/∂g
        with torch.no_grad():
            below, at = (log_likelihood(qa_model, case, layer, head, torch.tensor(s, dtype=torch.float64))
                         for s in (1 - epsilon, 1.0))
        toward_knock_out = (below - at) / epsilon
        assert float(toward_knock_out) == pytest.approx(-float(derivative), rel=1e-4, abs=1e-6)


def test_it_reads_the_gradients_own_pass_and_adds_nothing_to_the_price(tiny_bert, monkeypatch):
    passes = []
    counted = gradient.gated_logits
    monkeypatch.setattr(gradient, "gated_logits", lambda *args: passes.append(1) or counted(*args))
    found = score_case(tiny_bert, EXAMPLE, head_case(tiny_bert, EXAMPLE.passage, EXAMPLE.question))
    assert len(passes) == 1  # one forward and backward of the gated copy serves the gradient and the estimate
    np.testing.assert_array_equal(np.abs(found.scores["first_order"]), found.scores["gradient"])
    # the default model's shape, by hand: each part's measured seconds (knock-outs 2.3, attention attribution 2.7,
    # AttnLRP 0.45, the gradient 0.06) at the knock-outs' 146 passes in 2.3 s, and the patterns' 6 forwards of a
    # third of a pass each; the estimate adds nothing
    assert heads_passes(6, 12) == pytest.approx((2.3 + 2.7 + 0.45 + 0.06) / (2.3 / 146) + 6 / 3)


def test_it_is_read_against_the_knock_outs_change_itself_by_hand():
    found = hand_made([[-0.3, 0.0, 0.1]], [[0.3, 0.0, 0.1]])
    found.scores["first_order"] = np.array([[-0.25, 0.01, 0.2]])  # the order of Δ itself: ρ = 1
    assert found.agreement()["first_order"] == [pytest.approx(1.0)]
    # it says head 0 matters most (the largest predicted drop, 0.25), and its knock-out's drop (Δ −0.3) is the largest
    assert score_reading(head_grid(found, "first_order").data, "first_order") == (
        "The first-order estimate ranks block 0, head 0 first (-0.2500); its knock-out's drop in log p(span) "
        "(-0.300) ranks 1st of 3.")


def test_the_pruning_curve_removes_first_the_heads_it_says_raise_f_by_their_removal(monkeypatch):
    removed = []
    monkeypatch.setattr(pruning, "f1_with_heads_removed",
                        lambda qa_model, layout, examples, heads: removed.append(list(heads)) or 0.0)
    # predicted changes +0.3, −0.5, 0, −0.1: least important first is +0.3 (head 0), then 0, −0.1, −0.5
    pruning_curve(None, SimpleNamespace(layers=1, heads=4), [], {"first_order": np.array([[0.3, -0.5, 0.0, -0.1]])},
                  [0, 1, 2, 3, 4])
    assert removed[:5] == [[], [(0, 0)], [(0, 0), (0, 2)], [(0, 0), (0, 2), (0, 3)],
                           [(0, 0), (0, 2), (0, 3), (0, 1)]]
