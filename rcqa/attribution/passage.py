"""The whole passage in one explanation: every window's states on one path, one target over all windows, and the
windows' token scores merged into one sequence of the whole passage.

The target. A target is a function of the start and end logits; over the whole passage it is the same function of
every window's logits laid end to end, with the span's tokens (and [CLS], for the null targets) at their place in
that sequence. So span_log_prob is log p(start) + log p(end) with each softmax over every token of every window (of
one window, today's target exactly); the logit targets (span_logits, start_logit, end_logit) read the span's window
only and answer_vs_null the span's and the null's windows (the one the decoder takes the null from), so the other
windows' attributions are zero and are not computed.

The path. At a layer l every window's states are interpolated with the same α, x'_w + α (x_w − x'_w), so the
joint F has one path and IG's completeness holds for it: the attributions of every window's tokens sum to
F(input) − F(baseline). Its gradient is taken window by window within the memory budget: the logits of every
window at the path points first (the windows that fit are kept with their graph), then dF/dlogits on that small
tensor, then one backward per window with it as grad_outputs (a window that did not fit runs again, with its graph).
rcqa.attribution.path integrates, checks and refines the joint F as it does one window's.

The merge: rcqa.attribution.layout.

The layer outputs kept. The result keeps the explained span's window's layer outputs, as that window computed
them, and where its tokens are in the whole passage: the projections map that window's tokens. Every window's
would be 327 MB for a passage of 128 windows of the default model.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from rcqa.attribution.engine import aggregate, baseline_logits, chunk_size
from rcqa.attribution.layout import PassageLayout
from rcqa.attribution.memory import budget_mb, in_chunks
from rcqa.types.settings import ExplainSettings
from rcqa.attribution.stack import LayerStack, same_calls
from rcqa.attribution.targets import Target
from rcqa.attribution.window import ExplainedWindow, baseline_stack, on_device, window_inputs
from rcqa.model import QAModel
from rcqa.spans import NULL_TOKEN, null_scores
from rcqa.types import Completeness, Foil


@dataclass(frozen=True)
class WindowProgress:
    """Reported while a layer of a whole-passage explanation runs: a window's gradients are done, in the layer's
    `path_pass`-th pass of gradients (the adaptive rule refines a layer in several), `points` path points of the
    layer done so far over every read window (a pass's windows counted as they finish)."""

    layer: int
    label: str
    window: int  # 1-based
    windows: int
    path_pass: int = 1
    points: float = 0.0

    def describe(self, expected_points: float | None = None) -> str:
        """Where the layer stands, in words: its pass, the path points done (of those expected) and the window."""
        expected = f" of about {expected_points:.0f} expected" if expected_points else ""
        return (f"{self.label}: pass {self.path_pass}, {self.points:.0f} path points done{expected}; window "
                f"{self.window} of {self.windows}")


class PassagePath:
    """The joint path at one layer: every read window's states x'_w + α (x_w − x'_w), laid end to end along the
    tokens (1 × Σ tokens × dim), and the targets over every window's logits laid the same way.

    Windows of one length whose blocks take the same extra arguments (no padding: the same all-ones mask, or none)
    run as one batch through the blocks, as many as the memory budget allows beside their path points."""

    def __init__(self, stacks: list[LayerStack], baselines: list[LayerStack | None], layer: int,
                 targets: list[Target], read: list[int], memory_budget_mb: int,
                 on_window: Callable[[int, int, float], None] | None = None):
        self.stacks, self.baselines, self.layer, self.targets, self.read = stacks, baselines, layer, targets, read
        self.x = [s.hidden[layer] for s in stacks]
        self.x_base = [b.hidden[layer] if b else torch.zeros_like(x) for b, x in zip(baselines, self.x)]
        self.difference = torch.cat([x - x_base for x, x_base in zip(self.x, self.x_base)], dim=1)
        self.lengths = [x.shape[1] for x in self.x]
        self.on_window = on_window
        self.passes, self.window_points = 0, 0  # gradient passes run, and path points × windows whose gradients are done
        longest = max(read, key=lambda w: self.lengths[w])
        x = self.x[longest]
        self.capacity = chunk_size(stacks[longest], layer, x, budget_mb(x.device, memory_budget_mb), len(targets))
        self.groups = _groups(stacks, read, layer)

    def _batches(self, points: int) -> list[tuple[int, ...]]:
        """The read windows in batches that run together, each of at most capacity // points windows."""
        size = max(1, self.capacity // points)
        return [group[i:i + size] for group in self.groups for i in range(0, len(group), size)]

    def _run(self, batch: tuple[int, ...], path: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end logits of a batch's path points (windows × points rows, window after window)."""
        return self.stacks[batch[0]].run_from(self.layer, path)

    def _path(self, batch: tuple[int, ...], alpha: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.x_base[w] + alpha[:, None, None] * (self.x[w] - self.x_base[w]) for w in batch])

    def _joint(self, logits: dict[int, tuple[torch.Tensor, torch.Tensor]], points: int):
        """Every window's start and end logits laid end to end (points × Σ tokens); a window not read keeps its
        input's logits, which no target depends on."""
        def laid(side: int) -> torch.Tensor:
            rows = [logits[w][side] if w in logits else
                    (self.stacks[w].start_logits, self.stacks[w].end_logits)[side].expand(points, -1)
                    for w in range(len(self.stacks))]
            return torch.cat(rows, dim=1)
        return laid(0), laid(1)

    def ends(self) -> torch.Tensor:
        """F at α = 0 and 1 with no forward where the logits are known (as for one window: rcqa.attribution.path)."""
        at_baseline = {w: baseline_logits(self.stacks[w], self.baselines[w], self.layer) for w in self.read}
        at_input = {w: (s.start_logits, s.end_logits) for w, s in enumerate(self.stacks)}
        known = {w: logits for w, logits in at_baseline.items() if logits is not None}
        return torch.cat([self._at(known) if len(known) == len(at_baseline) else self.values([0.0]),
                          self._at(at_input)], dim=1)

    def _at(self, logits: dict[int, tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        start, end = self._joint(logits, 1)
        return torch.stack([t(start, end) for t in self.targets]).cpu()

    def values(self, alphas) -> torch.Tensor:
        alpha = torch.as_tensor(np.asarray(alphas), dtype=self.difference.dtype, device=self.difference.device)
        logits: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        with torch.no_grad():
            for batch in self._batches(len(alpha)):
                logits |= _by_window(batch, self._run(batch, self._path(batch, alpha)), len(alpha))
            start, end = self._joint(logits, len(alpha))
            return torch.stack([t(start, end) for t in self.targets]).cpu()

    def gradients(self, alphas: np.ndarray, weights: np.ndarray) -> torch.Tensor:
        self.passes += 1
        device, dtype = self.difference.device, self.difference.dtype
        alpha_values = torch.as_tensor(alphas, dtype=dtype, device=device)
        weight_values = torch.as_tensor(weights, dtype=dtype, device=device)
        sums = [x.new_zeros((len(self.targets), weights.shape[1], *x.shape)) for x in self.x]

        def chunk_sums(begin: int, end: int) -> None:
            found = self._chunk_gradients(alpha_values[begin:end], weight_values[begin:end])
            for w, by_target in found.items():  # added only once every window's backward fitted
                for t, chunk_sum in by_target.items():
                    sums[w][t] += chunk_sum

        points = max(1, min(len(alphas), self.capacity // len(self.read)))
        in_chunks(len(alphas), points, chunk_sums, device)
        return torch.cat(sums, dim=-2)

    def _chunk_gradients(self, alpha: torch.Tensor, weight: torch.Tensor) -> dict[int, dict[int, torch.Tensor]]:
        """Per read window and target: Σ_k weight[k, j] ∇_x_w F at this chunk's points (sums × 1 × tokens × dim).
        The batches that fit in the budget keep their graphs; the others run without one first, and again with one
        once dF/dlogits is known."""
        kept: dict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        logits: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        used = 0
        for batch in self._batches(len(alpha)):
            if not kept or used + len(batch) * len(alpha) <= self.capacity:
                kept[batch] = self._forward(batch, alpha)
                used += len(batch) * len(alpha)
                _, start, end = kept[batch]
                logits |= _by_window(batch, (start.detach(), end.detach()), len(alpha))
            else:
                with torch.no_grad():
                    logits |= _by_window(batch, self._run(batch, self._path(batch, alpha)), len(alpha))
        outputs = self._logit_gradients(logits, len(alpha))
        found: dict[int, dict[int, torch.Tensor]] = {}
        for batch in [*kept, *(b for b in self._batches(len(alpha)) if b not in kept)]:  # the kept graphs first
            wanted = [t for t in range(len(self.targets))
                      if any(start.any() or end.any() for start, end in (outputs[w][t] for w in batch))]
            path, start, end = kept.pop(batch) if batch in kept else self._forward(batch, alpha)
            for i, t in enumerate(wanted):
                grad_outputs = tuple(torch.cat([outputs[w][t][side] for w in batch]) for side in (0, 1))
                (gradient,) = torch.autograd.grad((start, end), path, grad_outputs=grad_outputs,
                                                  retain_graph=i < len(wanted) - 1)
                for w, rows in zip(batch, gradient.split(len(alpha))):
                    found.setdefault(w, {})[t] = torch.einsum("ks,ktd->std", weight, rows)[:, None]
            del path, start, end
            self.window_points += len(batch) * len(alpha)
            if self.on_window:
                for w in batch:
                    self.on_window(w, self.passes, self.window_points / len(self.read))
        return found

    def _forward(self, batch: tuple[int, ...], alpha: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(path points with their graph, start logits, end logits) of a batch."""
        path = self._path(batch, alpha).requires_grad_(True)
        with torch.enable_grad():
            return (path, *self._run(batch, path))

    def _logit_gradients(self, logits: dict[int, tuple[torch.Tensor, torch.Tensor]],
                         points: int) -> dict[int, list[tuple[torch.Tensor, torch.Tensor]]]:
        """Per read window, per target: (dF/dstart, dF/dend) of that window (points × tokens), by autograd on the
        logits laid end to end."""
        start, end = (side.detach().requires_grad_(True) for side in self._joint(logits, points))
        per_target = []
        with torch.enable_grad():
            for target in self.targets:
                found = torch.autograd.grad(target(start, end).sum(), (start, end), allow_unused=True)
                per_target.append([torch.zeros_like(start) if g is None else g for g in found])
        bounds = np.cumsum([0, *self.lengths])
        return {w: [(s[:, bounds[w]:bounds[w + 1]], e[:, bounds[w]:bounds[w + 1]]) for s, e in per_target]
                for w in self.read}


def _by_window(batch: tuple[int, ...], logits: tuple[torch.Tensor, torch.Tensor],
               points: int) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    """A batch's (start, end) logits, rows window after window, as each window's (points × tokens) pair."""
    return {w: pair for w, pair in zip(batch, zip(*(side.split(points) for side in logits)))}


def _groups(stacks: list[LayerStack], read: list[int], layer: int) -> list[tuple[int, ...]]:
    """The read windows in groups that can run as one batch: of one length, their blocks above `layer` called with
    the same extra arguments, each of them None or a tensor of batch 1 (which broadcasts over any batch)."""
    groups: list[list[int]] = []
    for w in read:
        home = next((g for g in groups if same_calls(stacks[g[0]], stacks[w], layer)), None)
        if home is None:
            groups.append([w])
        else:
            home.append(w)
    return [tuple(g) for g in groups]


@dataclass
class PassageScope:
    """Every window of the passage on one path (module docstring), as rcqa.attribution.engine.iter_layers runs it:
    the windows' stacks and input baselines' (None for the zero baseline), the targets over every window's logits
    laid end to end, the windows they read, and on_progress told as each window's gradients are done."""

    stacks: list[LayerStack]
    baselines: list[LayerStack | None]
    layout: PassageLayout
    targets: list[Target]
    read: list[int]
    explained_window: int  # the window of the explained span
    null_window: int  # the window "no answer" is read in
    on_progress: Callable[[WindowProgress], None] | None = None

    @classmethod
    def of(cls, qa_model: QAModel, explained: ExplainedWindow, window_targets: list[Target], foil: Foil | None,
           baseline: str, on_progress: Callable[[WindowProgress], None] | None = None) -> PassageScope:
        """The passage of the explained window, with its targets (as read in that window) over every window."""
        windows = explained.windows
        inputs = [window_inputs(windows, w) for w in range(len(windows))]
        stacks = [LayerStack(qa_model.model, on_device(window, qa_model.device)) for window in inputs]
        baselines = [baseline_stack(qa_model, window, baseline) for window in inputs]
        # the decoder's rule (run_squad's), on the logits it decoded: "no answer" is read where its score is least
        null_window = int(null_scores(*explained.logits).argmin())
        scope = cls(stacks, baselines, PassageLayout.of(windows), [], [], explained.window, null_window, on_progress)
        bounds = scope.bounds
        scope.targets = scope.placed(window_targets, foil, lambda w, t: int(bounds[w] + t))
        scope.read = _read_windows(stacks, scope.targets)
        return scope

    @property
    def labels(self) -> list[str]:
        return self.stacks[0].labels

    @property
    def bounds(self) -> np.ndarray:
        """Where each window's tokens begin (and the last ends) among every window's tokens laid end to end."""
        return np.cumsum([0, *(len(p) for p in self.layout.positions)])

    def placed(self, window_targets: list[Target], foil: Foil | None,
               position: Callable[[int, int], int]) -> list[Target]:
        """The targets with their tokens at `position(window, token)`: the span in the explained window, "no
        answer" in the null window, a contrast's foil in its own window."""
        def place(target: Target) -> Target:
            foil_tokens: dict[str, int] = {}
            if target.name == "contrast":
                assert foil is not None  # a contrast is made only with its foil
                foil_tokens = {"foil_start_token": position(foil.window, foil.start_token),
                               "foil_end_token": position(foil.window, foil.end_token)}
            return Target(target.name, position(self.explained_window, target.start_token),
                          position(self.explained_window, target.end_token),
                          null_token=position(self.null_window, NULL_TOKEN), **foil_tokens)
        return [place(target) for target in window_targets]

    def path(self, layer: int, settings: ExplainSettings) -> PassagePath:
        on_progress = self.on_progress
        report = ((lambda w, path_pass, points: on_progress(
            WindowProgress(layer, self.labels[layer], w + 1, len(self.stacks), path_pass, points)))
                  if on_progress else None)
        return PassagePath(self.stacks, self.baselines, layer, self.targets, self.read, settings.memory_budget_mb,
                           report)

    def layer_scores(self, attributions: list[torch.Tensor],
                     completeness: list[Completeness]) -> tuple[np.ndarray, list[Completeness]]:
        """The merged scores of the passage's tokens, and each check with every window's share of its sum."""
        completeness = [dataclasses.replace(c, window_sums=tuple(float(part.sum()) for part in
                                                                 torch.tensor_split(a, self.bounds[1:-1].tolist())))
                        for c, a in zip(completeness, attributions)]
        return self.layout.merge(np.stack([aggregate(a) for a in attributions])), completeness

    def kept_states(self) -> tuple[np.ndarray, list[int] | None]:
        """The layer outputs a result keeps (module docstring): the explained window's (layers × tokens × dim),
        and where its tokens are among the passage's (None where they are all of them)."""
        positions = self.layout.positions[self.explained_window]
        return (torch.cat(self.stacks[self.explained_window].hidden).cpu().numpy(),
                None if positions == tuple(range(len(self.layout))) else list(positions))


def _read_windows(stacks: list[LayerStack], targets: list[Target]) -> list[int]:
    """The windows some target depends on: those where dF/dlogits is not zero at the input. Every target of
    rcqa.attribution.targets is either linear in the logits (so its gradient is the same everywhere) or reads
    every window through a softmax, so this is exact for each of them."""
    start = torch.cat([s.start_logits for s in stacks], dim=1).requires_grad_(True)
    end = torch.cat([s.end_logits for s in stacks], dim=1).requires_grad_(True)
    bounds = np.cumsum([0, *(s.start_logits.shape[1] for s in stacks)])
    read = set()
    with torch.enable_grad():
        for target in targets:
            for gradient in torch.autograd.grad(target(start, end).sum(), (start, end), allow_unused=True):
                if gradient is not None:
                    read |= {w for w in range(len(stacks)) if gradient[0, bounds[w]:bounds[w + 1]].any()}
    return sorted(read)
