"""The integrator of Integrated Gradients along one straight path x' → x, for any set of states and targets.

A path is what the integrator asks of it: F at its two ends, F at points α (forward only), gradient sums
Σ_k w_k ∇F at points α_k (one column of weights per sum), and x − x'. The engine's path is one window's states at
one layer (rcqa.attribution.engine); the whole passage's is every window's states at once
(rcqa.attribution.passage), so the same panels, refinement and completeness check serve both.

F at the ends takes no forward where the model's own logits are known: at α = 1 the states are the input's, so F
is the target at the input's logits; at α = 0 an input baseline's states (pad, mask) are that baseline input's, so F
is the target at its logits when the blocks above the layer were called for it as for the input. Only the zero
baseline's end is run from the layer.

By default the path is integrated on Gauss–Legendre panels, each checked on its own, and only the worst panel is
refined (by Kronrod's extension of its rule, then by halving) until the relative error is under a tolerance.
"""
from __future__ import annotations

import functools
import operator
from typing import Protocol

import numpy as np
import torch

from rcqa.attribution.quadrature import adaptive, gauss_kronrod, nodes_and_weights
from rcqa.types.settings import ExplainSettings


class Path(Protocol):
    @property
    def difference(self) -> torch.Tensor:
        """x − x'"""

    def ends(self) -> torch.Tensor:
        """(targets × 2) on the CPU: F at α = 0 and α = 1."""

    def values(self, alphas) -> torch.Tensor:
        """(targets × points) on the CPU: F at x' + α (x − x'), forward only."""

    def gradients(self, alphas: np.ndarray, weights: np.ndarray) -> torch.Tensor:
        """targets × sums × x's shape: for each column j of weights (points × sums), Σ_k weights[k, j] ∇F(α_k)."""


class Integral:
    """The path's gradient sums per target (targets × x's shape), F at both ends, and the gradients spent."""

    def __init__(self, panels: list[_Panel]):
        self.gradients = functools.reduce(operator.add, (p.gradients for p in panels))
        self.steps = sum(p.points for p in panels)
        self.f_input, self.f_baseline = panels[-1].f_end, panels[0].f_start


def integrate_path(path: Path, settings: ExplainSettings) -> Integral:
    """IG along the path, with the rule as set, or adaptively (Gauss–Legendre with a tolerance)."""
    if settings.tolerance is not None and adaptive(settings.rule):
        return Integral(_adaptive_panels(path, settings))
    alphas, weights = nodes_and_weights(settings.rule, settings.steps)
    ends = path.ends()
    gradients = path.gradients(alphas, weights[:, None])
    return Integral([_Panel(0.0, 1.0, len(alphas), gradients[:, 0], ends[:, 0], ends[:, 1], path.difference)])


class _Panel:
    """A piece [start, end] of the path, integrated with its own points, with F known at both ends.

    A Gauss panel also keeps, from the same gradients, the Kronrod weights' share of them, so that it can be
    extended to Kronrod's rule by the added nodes alone."""

    def __init__(self, start: float, end: float, points: int, gradients: torch.Tensor, f_start: torch.Tensor,
                 f_end: torch.Tensor, difference: torch.Tensor, kronrod_share: torch.Tensor | None = None):
        self.start, self.end, self.points = start, end, points
        self.gradients = gradients  # targets × x's shape: Σ_k w_k ∇F over the panel's points
        self.kronrod_share = kronrod_share  # the same gradients with Kronrod's weights; None once extended
        self.f_start, self.f_end = f_start, f_end  # per target
        self.sums = (difference * gradients).flatten(1).sum(1).cpu()  # per target: Σ attributions

    @property
    def errors(self) -> torch.Tensor:
        """Per target: the panel's own completeness gap |Σ attributions − (F(end) − F(start))|."""
        return (self.sums - (self.f_end - self.f_start)).abs()


def _adaptive_panels(path: Path, settings: ExplainSettings) -> list[_Panel]:
    """Composite Gauss–Legendre on panels of steps/2 points. Every panel can be checked for completeness on its
    own, F at its ends costing a forward pass only, so the panel with the largest gap is refined, and only it,
    until the relative error is under the tolerance or max_steps gradients have been spent. A Gauss
    panel is refined by Kronrod's extension, which keeps its gradients; an extended one is halved."""
    assert settings.tolerance is not None  # integrate_path refines only toward a tolerance
    points = max(1, settings.steps // 2)
    edges = np.linspace(0.0, 1.0, max(1, settings.steps // points) + 1)
    ends = path.ends()
    values = torch.cat([ends[:, :1], path.values(edges[1:-1]), ends[:, 1:]], dim=1) if len(edges) > 2 else ends
    panels = _gauss_panels(path, edges, values, points)
    spent = len(panels) * points
    delta = (values[:, -1] - values[:, 0]).abs().clamp_min(1e-9)
    while True:
        total = torch.stack([p.sums for p in panels]).sum(0)
        if float(((total - (values[:, -1] - values[:, 0])).abs() / delta).max()) <= settings.tolerance:
            break
        worst = max(range(len(panels)), key=lambda i: float((panels[i].errors / delta).sum()))
        panel = panels[worst]
        cost = points + 1 if panel.kronrod_share is not None else 2 * points
        if spent + cost > settings.max_steps:
            break
        spent += cost
        if panel.kronrod_share is not None:
            panels[worst] = _kronrod_panel(path, panel)
            continue
        halves = np.array([panel.start, (panel.start + panel.end) / 2, panel.end])
        f_middle = path.values(halves[1:2])
        ends = torch.cat([panel.f_start[:, None], f_middle, panel.f_end[:, None]], dim=1)
        panels[worst:worst + 1] = _gauss_panels(path, halves, ends, points)
    return panels


def _gauss_panels(path: Path, edges: np.ndarray, values: torch.Tensor, points: int) -> list[_Panel]:
    """Gauss panels between consecutive edges (F known there: targets × edges), all integrated in one batch."""
    nodes, gauss_weights = nodes_and_weights("gausslegendre", points)
    _, kronrod_weights, _ = gauss_kronrod(points)
    widths = np.diff(edges)
    alphas = np.concatenate([a + w * nodes for a, w in zip(edges[:-1], widths)])
    # per panel two sums of the same gradients: the Gauss estimate and the Kronrod weights' share of it
    weights = np.zeros((len(alphas), 2 * len(widths)))
    for i, width in enumerate(widths):
        rows = slice(i * points, (i + 1) * points)
        weights[rows, 2 * i], weights[rows, 2 * i + 1] = width * gauss_weights, width * kronrod_weights
    sums = path.gradients(alphas, weights)
    return [_Panel(float(edges[i]), float(edges[i + 1]), points, sums[:, 2 * i], values[:, i], values[:, i + 1],
                   path.difference, kronrod_share=sums[:, 2 * i + 1]) for i in range(len(widths))]


def _kronrod_panel(path: Path, panel: _Panel) -> _Panel:
    """The panel integrated by Kronrod's extension of its Gauss rule: only the points + 1 added nodes are new."""
    added, _, added_weights = gauss_kronrod(panel.points)
    assert panel.kronrod_share is not None  # _adaptive_panels extends only a panel not yet extended
    width = panel.end - panel.start
    sums = path.gradients(panel.start + width * added, (width * added_weights)[:, None])
    return _Panel(panel.start, panel.end, 2 * panel.points + 1, panel.kronrod_share + sums[:, 0], panel.f_start,
                  panel.f_end, path.difference)
