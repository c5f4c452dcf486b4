"""Layer-wise Integrated Gradients at the output of every layer, in one prefix-cached call.

One forward pass caches every layer's hidden states H_l (and, for an input baseline, the baseline's).
For layer l, only the blocks above l and the QA head run, on a batch of path points at once, split
into chunks that fit a memory budget; targets that share the forward share it, each with one
backward. Each layer is checked for completeness; the path is integrated by rcqa.attribution.path (adaptive
Gauss–Legendre panels by default). Results stream layer by layer. rcqa.attribution.passage explains every window
of a passage at once on the same machinery.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rcqa.attribution.contrast import Foil, contrast_target, find_foil
from rcqa.attribution.memory import budget_mb, in_chunks
from rcqa.attribution.path import Integral, integrate_path
from rcqa.attribution.quadrature import nodes_and_weights
from rcqa.attribution.settings import IGSettings
from rcqa.attribution.stack import LayerStack, same_calls
from rcqa.attribution.targets import Target
from rcqa.model import QAModel
from rcqa.qa import InputError, answer_with_logits, char_span_to_tokens
from rcqa.spans import Windows
from rcqa.text import word_at, written_words
from rcqa.types import (
    AGGREGATIONS,
    NULL_TARGETS,
    Answer,
    Attribution,
    Completeness,
    Example,
    Windowing,
    Word,
    explained_target,
)

@dataclass
class LayerResult:
    """One layer's attributions, as streamed: scores (targets × aggregations × tokens)."""

    layer: int
    label: str
    scores: np.ndarray
    completeness: list[Completeness]
    seconds: float


@dataclass(frozen=True)
class ExplainedWindow:
    """The window an explanation is taken at, as the model reads it, and the token span its targets explain."""

    answer: Answer
    windows: Windows
    window: int
    start_token: int
    end_token: int
    inputs: dict[str, torch.Tensor]  # the window's model inputs without padding (1 × tokens), on the CPU
    logits: tuple[torch.Tensor, torch.Tensor]  # every window's start and end logits, as the answer was decoded

    @property
    def length(self) -> int:
        return self.inputs["input_ids"].shape[1]

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Per token: its characters in the question or the passage."""
        return self.windows.offsets[self.window][:self.length]

    @property
    def segments(self) -> list[str]:
        """Per token: 'question', 'passage' or 'special'."""
        return self.windows.segments[self.window][:self.length]

    @property
    def span(self) -> tuple[int, int, int]:
        """(window, start token, end token) of the explained span."""
        return self.window, self.start_token, self.end_token

    def span_text(self, passage: str) -> str:
        return passage[self.offsets[self.start_token][0]:self.offsets[self.end_token][1]]

    def words(self, passage: str) -> list[Word]:
        """The question's and the passage's words as written, with the window's tokens mapped onto them."""
        return token_words(self.offsets, self.segments, self.windows.question, passage)


def explained_window(qa_model: QAModel, example: Example, span: str = "predicted",
                     allow_null: bool | None = None) -> ExplainedWindow:
    """Answer the example (allow_null as in rcqa.qa.answer) and find the window and tokens of the span to explain
    ('predicted', 'gold', 'nbest:K'). 'predicted' is the best span, also when the model rejected it for "no answer"."""
    answer, windows, logits = answer_with_logits(qa_model, example.passage, example.question, allow_null=allow_null)
    window, start_token, end_token = _span_tokens(span, example, answer, windows)
    return ExplainedWindow(answer, windows, window, start_token, end_token, window_inputs(windows, window), logits)


def explain(qa_model: QAModel, example: Example, settings: IGSettings = IGSettings(),
            on_layer: Callable[[LayerResult], None] | None = None) -> Attribution:
    """Answer the example, then attribute the chosen targets at every layer of the answer's window (with a
    contrast, it comes first: rcqa.attribution.contrast)."""
    started = time.perf_counter()
    explained = explained_targets(qa_model, example, settings)
    inputs, targets = explained.window.inputs, explained.targets
    stack = LayerStack(qa_model.model, _to(inputs, qa_model.device))
    layer_results = []
    for result in iter_layers(qa_model, stack, inputs, targets, settings):
        layer_results.append(result)
        if on_layer:
            on_layer(result)
    return window_attribution(qa_model, example, settings, explained, layers=stack.labels,
                              scores=np.stack([r.scores for r in layer_results], axis=2),
                              completeness=[c for r in layer_results for c in r.completeness],
                              hidden_states=torch.cat(stack.hidden).cpu().numpy(), started=started)


@dataclass(frozen=True)
class ExplainedTargets:
    """The window an explanation is taken at and its targets (a contrast first), with the foil it names."""

    window: ExplainedWindow
    targets: list[Target]
    foil: Foil | None


def explained_targets(qa_model: QAModel, example: Example, settings: IGSettings) -> ExplainedTargets:
    """Answer the example, find the explained span's window, and the targets the settings ask for there."""
    refuse_null_targets(qa_model, settings)
    explained = explained_window(qa_model, example, settings.span, settings.allow_null)
    foil = settings.contrast and find_foil(settings.contrast, explained.logits, example, explained.answer,
                                           explained.windows, explained.span)
    targets = ([contrast_target(foil, *explained.span)] if foil else []) + [
        Target(name, explained.start_token, explained.end_token) for name in settings.targets]
    return ExplainedTargets(explained, targets, foil or None)


def window_attribution(qa_model: QAModel, example: Example, settings: IGSettings, explained: ExplainedTargets,
                       layers: list[str], scores: np.ndarray, completeness: list[Completeness],
                       hidden_states: np.ndarray, started: float) -> Attribution:
    """The result of one window's explanation: scores (targets × aggregations × layers × tokens)."""
    window, targets, foil = explained.window, explained.targets, explained.foil
    inputs = window.inputs
    return Attribution(
        example=example, model=qa_model.name, fingerprint=qa_model.fingerprint, answer=window.answer,
        window=window.window, tokens=qa_model.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist()),
        token_offsets=window.offsets, token_segments=window.segments, words=window.words(example.passage),
        layers=layers,
        targets=[explained_target(t, window.span_text(example.passage), window.window, foil) for t in targets],
        scores=scores, completeness=completeness,
        settings=settings, windowing=Windowing(qa_model.max_len, qa_model.doc_stride),
        seconds=time.perf_counter() - started, hidden_states=hidden_states,
    )


def refuse_null_targets(qa_model: QAModel, settings: IGSettings) -> None:
    """A "no answer" target (null, answer_vs_null, a contrast with it) on a model with nowhere to read it: refused
    with the model's sentence (rcqa.model.QAModel.null_refusal)."""
    if (set(settings.targets) & set(NULL_TARGETS) or settings.contrast == "null") and qa_model.null_refusal:
        raise InputError(qa_model.null_refusal)


def iter_layers(qa_model: QAModel, stack: LayerStack, inputs: dict[str, torch.Tensor], targets: list[Target],
                settings: IGSettings, layers: Sequence[int] | None = None) -> Iterator[LayerResult]:
    """Attribute every layer (or only `layers`), from the embeddings up, yielding each as soon as it is done."""
    baselines = baseline_stack(qa_model, inputs, settings.baseline)
    labels = stack.labels
    for layer in range(stack.num_layers + 1) if layers is None else layers:
        started = time.perf_counter()
        x = stack.hidden[layer]
        x_base = baselines.hidden[layer] if baselines else torch.zeros_like(x)
        attributions, completeness = _attribute_layer(stack, baselines, layer, x, x_base, targets, settings)
        scores = np.stack([aggregate(a) for a in attributions])
        yield LayerResult(layer, labels[layer], scores, completeness, time.perf_counter() - started)


def baseline_stack(qa_model: QAModel, inputs: dict[str, torch.Tensor], kind: str) -> LayerStack | None:
    """The layer states of an input baseline ("pad", "mask": every token but [CLS]/[SEP] replaced), or None for the
    zero baseline, which has no input."""
    if kind == "zero":
        return None
    return LayerStack(qa_model.model, _to(_baseline_inputs(qa_model, inputs, kind), qa_model.device))


def _attribute_layer(stack: LayerStack, baseline: LayerStack | None, layer: int, x: torch.Tensor,
                     x_base: torch.Tensor, targets: list[Target],
                     settings: IGSettings) -> tuple[list[torch.Tensor], list[Completeness]]:
    """IG at one layer of one window (rcqa.attribution.path integrates it)."""
    path = _WindowPath(stack, baseline, layer, x, x_base, targets, settings.memory_budget_mb)
    integral = integrate_path(path, settings)
    return layer_attributions(layer, x - x_base, integral, targets)


def layer_attributions(layer: int, difference: torch.Tensor, integral: Integral,
                       targets: list[Target]) -> tuple[list[torch.Tensor], list[Completeness]]:
    """Per target, the tokens × dim attributions (x − x') ⊙ Σ w ∇F and the layer's completeness check."""
    attributions = [(difference * integral.gradients[t])[0] for t in range(len(targets))]
    completeness = [Completeness(layer=layer, target=target.name, steps=integral.steps,
                                 f_input=float(integral.f_input[t]), f_baseline=float(integral.f_baseline[t]),
                                 attribution_sum=float(attributions[t].sum()))
                    for t, target in enumerate(targets)]
    return attributions, completeness


@dataclass
class _WindowPath:
    """The path at one layer of one window: what rcqa.attribution.path.integrate_path asks of it."""

    stack: LayerStack
    baseline: LayerStack | None  # the input baseline's states; None for the zero baseline
    layer: int
    x: torch.Tensor
    x_base: torch.Tensor
    targets: list[Target]
    memory_budget_mb: int

    @property
    def difference(self) -> torch.Tensor:
        return self.x - self.x_base

    def ends(self) -> torch.Tensor:
        at_baseline = baseline_logits(self.stack, self.baseline, self.layer)
        return torch.cat([self._at(at_baseline) if at_baseline else self.values([0.0]),
                          self._at((self.stack.start_logits, self.stack.end_logits))], dim=1)

    def _at(self, logits: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return torch.stack([t(*logits) for t in self.targets]).cpu()

    def values(self, alphas) -> torch.Tensor:
        return _values(self.stack, self.layer, self.x, self.x_base, self.targets, alphas)

    def gradients(self, alphas: np.ndarray, weights: np.ndarray) -> torch.Tensor:
        return path_gradients(self.stack, self.layer, self.x, self.x_base, self.targets, alphas, weights,
                              self.memory_budget_mb)


def baseline_logits(stack: LayerStack, baseline: LayerStack | None,
                    layer: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The baseline input's start and end logits, which are the model's at α = 0 of the path at `layer` when the
    blocks above it were called for the baseline as for the input; None for the zero baseline or where they were
    not (F there is then run from the layer)."""
    if baseline is None or not same_calls(stack, baseline, layer):
        return None
    return baseline.start_logits, baseline.end_logits


def _values(stack: LayerStack, layer: int, x: torch.Tensor, x_base: torch.Tensor, targets: list[Target],
            alphas) -> torch.Tensor:
    """(targets × points): F at x' + α (x − x'), forward only."""
    alpha = torch.as_tensor(np.asarray(alphas), dtype=x.dtype, device=x.device)
    with torch.no_grad():
        start, end = stack.run_from(layer, x_base + alpha[:, None, None] * (x - x_base))
        return torch.stack([t(start, end) for t in targets]).cpu()


def integrate(stack: LayerStack, layer: int, x: torch.Tensor, x_base: torch.Tensor, targets: list[Target],
              rule: str, steps: int, memory_budget_mb: int) -> list[torch.Tensor]:
    """(x − x') ⊙ Σ_k w_k ∇F(x' + α_k (x − x')) for each target, with one rule over the whole path."""
    alphas, weights = nodes_and_weights(rule, steps)
    gradients = path_gradients(stack, layer, x, x_base, targets, alphas, weights[:, None], memory_budget_mb)
    return [((x - x_base) * g[0])[0] for g in gradients]


def path_gradients(stack: LayerStack, layer: int, x: torch.Tensor, x_base: torch.Tensor, targets: list[Target],
                   alphas: np.ndarray, weights: np.ndarray, memory_budget_mb: int) -> torch.Tensor:
    """targets × sums × 1 × tokens × dim: for each column j of weights (path points × sums),
    Σ_k weights[k, j] ∇F(x' + α_k (x − x')). All points run as one batch, split into chunks that fit the
    memory budget (on a GPU, its free memory; halved on out-of-memory); every target is one backward through the
    same forward."""
    alphas = torch.as_tensor(alphas, dtype=x.dtype, device=x.device)
    weights = torch.as_tensor(weights, dtype=x.dtype, device=x.device)
    difference = x - x_base
    sums = x.new_zeros((len(targets), weights.shape[1], *x.shape))

    def chunk_sums(begin: int, end: int) -> None:
        alpha, weight = alphas[begin:end], weights[begin:end]
        path = (x_base + alpha[:, None, None] * difference).requires_grad_(True)
        with torch.enable_grad():
            start, end_logits = stack.run_from(layer, path)
            found = []
            for i, target in enumerate(targets):
                (gradient,) = torch.autograd.grad(target(start, end_logits).sum(), path,
                                                  retain_graph=i < len(targets) - 1)
                found.append(torch.einsum("ks,ktd->std", weight, gradient)[:, None])
        for i, chunk_sum in enumerate(found):  # added only once every target's backward fitted
            sums[i] += chunk_sum

    in_chunks(len(alphas), chunk_size(stack, layer, x, budget_mb(x.device, memory_budget_mb)), chunk_sums, x.device)
    return sums


def chunk_size(stack: LayerStack, layer: int, x: torch.Tensor, memory_budget_mb: int) -> int:
    """Path points per batch so that the activations kept for backward stay within the budget."""
    config = stack.model.config
    tokens, dim = x.shape[1], x.shape[2]
    heads = getattr(config, "num_attention_heads", getattr(config, "n_heads", 12))
    per_block = tokens * 14 * dim + 3 * heads * tokens * tokens  # floats kept per path point and block
    blocks = max(1, stack.num_layers - layer)
    return max(1, int(memory_budget_mb * 2**20 // (4 * per_block * blocks)))


def aggregate(attribution: torch.Tensor) -> np.ndarray:
    """tokens × dim → (aggregations × tokens), in the order of AGGREGATIONS. In float64: where a path leaves the
    model's range (the zero baseline under LayerNorm) attributions reach 1e24, whose squares overflow float32."""
    attribution = attribution.detach().double()
    norm = attribution.norm(dim=-1)
    by_name = {"l2": norm, "sum": attribution.sum(-1), "abs_sum": attribution.abs().sum(-1), "l2_squared": norm**2}
    return torch.stack([by_name[name] for name in AGGREGATIONS]).cpu().numpy()


def _span_tokens(span: str, example: Example, answer: Answer, windows: Windows) -> tuple[int, int, int]:
    """(window, start token, end token) of the span the targets are taken at."""
    if span == "predicted" or span == "nbest:0":
        best = answer.best
        return best.window, best.start_token, best.end_token
    if span.startswith("nbest:"):
        rank = int(span.split(":", 1)[1])
        if not 0 <= rank < len(answer.nbest):
            raise InputError(f"there are only {len(answer.nbest)} candidate spans; {span} does not exist")
        chosen = answer.nbest[rank]
        return chosen.window, chosen.start_token, chosen.end_token
    if span == "gold":
        if not example.answers or example.answers[0].start_char < 0:
            raise InputError("this example has no gold answer with a position in the passage")
        gold = example.answers[0]
        found = char_span_to_tokens(windows, gold.start_char, gold.start_char + len(gold.text))
        if found is None:
            raise InputError("the gold answer does not fit in any window of the passage")
        return found
    raise ValueError(f"unknown span {span!r}; use 'predicted', 'gold' or 'nbest:K'")


def window_inputs(windows: Windows, window: int) -> dict[str, torch.Tensor]:
    """One window's model inputs, without padding (so softmaxes run over real tokens only)."""
    length = int(windows.inputs["attention_mask"][window].sum())
    return {k: v[window:window + 1, :length] for k, v in windows.inputs.items()}


def _baseline_inputs(qa_model: QAModel, inputs: dict[str, torch.Tensor], kind: str) -> dict[str, torch.Tensor]:
    tokenizer = qa_model.tokenizer
    replacement = tokenizer.pad_token_id if kind == "pad" else tokenizer.mask_token_id
    ids = inputs["input_ids"]
    special = torch.tensor(tokenizer.get_special_tokens_mask(ids[0].tolist(), already_has_special_tokens=True),
                           dtype=torch.bool)[None]
    return {**inputs, "input_ids": torch.where(special, ids, torch.full_like(ids, replacement))}


def _to(inputs: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device) for k, v in inputs.items()}


def token_words(offsets: Sequence[tuple[int, int]], segments: Sequence[str], question: str,
                passage: str) -> list[Word]:
    """The question's and the passage's words as written, each with the tokens (their offsets and segments given)
    mapped onto it as the answers map them (rcqa.text.word_at). Words no token reaches are left out."""
    words = []
    for segment, text in (("question", question), ("passage", passage)):
        written = written_words(text)
        tokens = [t for t in range(len(offsets)) if segments[t] == segment and offsets[t][1] > offsets[t][0]]
        if not written or not tokens:
            continue
        held = word_at(torch.tensor([w.start_char for w in written]), torch.tensor([w.end_char for w in written]),
                       torch.tensor([offsets[t][0] for t in tokens]))
        pieces: dict[int, list[int]] = {}
        for token, index in zip(tokens, held.tolist()):
            pieces.setdefault(index, []).append(token)
        words += [Word(text=written[i].text, start_char=written[i].start_char, end_char=written[i].end_char,
                       segment=segment, tokens=tuple(found), tag=written[i].tag) for i, found in pieces.items()]
    return sorted(words, key=lambda word: word.tokens[0])
