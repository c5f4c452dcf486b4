"""Sanity checks for saliency maps (Adebayo et al., NeurIPS 2018): destroy the model's weights and see whether an
explanation notices.

The model's parts are re-initialised with the model's own initialiser (`_init_weights`: normal weights of the
config's initializer_range, zero biases, unit norms), seeded per part, on a private copy: the shared model is never
touched. The parts, from the top down as Adebayo et al. go from the logits layer down: the QA head (with whatever
runs between the last block and it), then each block from the last to the first, then the embeddings. Two series
of randomised models:

- cascade: the parts from the top down to part i randomised, the rest as trained (step i);
- independent: part i alone randomised.

On each randomised model every method scores the same window for the same target at the same span as on the
trained model (the randomised model's own answer means nothing), under each of its rankings; the passage words'
scores are then compared with the trained model's by Spearman's ρ and by the share of the trained model's top-k
words still in the top k.

A method fails the check when its explanation hardly changes once the QA head and every block are randomised
(cascade, the embeddings as trained): Spearman's ρ with the trained model's word scores of FAIL_AT or more. The
embeddings are left out of the verdict because a method that multiplies by the embeddings' output (gradient ×
input) would change there for that reason alone, whatever it reads of the model above them; the cascade's last step
(every weight random) is reported beside it. The random baseline never reads the model: it fails, by design, and
shows what failing looks like.
"""
from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from rcqa.attribution.methods import COMPARED, METHODS, Case, make_method, normalised, word_scores
from rcqa.attribution.methods.random_baseline import RandomBaseline
from rcqa.attribution.settings import ExplainSettings
from rcqa.faithfulness.entry import Entry
from rcqa.attribution.cost import Price, point_memory_mb, worst_case
from rcqa.faithfulness.cost import pass_seconds, passes_after_each, scoring_passes
from rcqa.faithfulness.metrics import rank_correlation
from rcqa.model import QAModel
from rcqa.types import Example, Word

TOP_K = 5  # the words whose overlap is counted
FAIL_AT = 0.5  # ρ with the trained model's word scores, the head and every block random, at which a method fails
SERIES = ("cascade", "independent")


@dataclass(frozen=True)
class Part:
    """A part of the model that is randomised as one: its label and the modules it holds (qualified names)."""

    label: str
    modules: tuple[str, ...]


@dataclass
class EntryResult:
    """One entry (a method under one ranking): per series, per step, Spearman's ρ and the top-k overlap with the
    trained model's word scores (ρ None where the randomised scores are all equal)."""

    spearman: dict[str, list[float | None]]
    top_k_overlap: dict[str, list[float]]


@dataclass
class SanityCheck:
    """Every entry's agreement with its own explanation of the trained model, per randomisation step."""

    example: Example
    model: str
    words: list[Word]  # the passage words of the explained window: what is compared
    parts: list[Part]  # from the top down: the QA head, the blocks from the last, the embeddings
    entries: dict[Entry, EntryResult]
    k: int
    seed: int
    seconds: float
    fail_at: float = FAIL_AT
    verdict_step: int = field(init=False)  # the cascade step the verdict reads: the head and every block random

    def __post_init__(self):
        self.verdict_step = len(self.parts) - 2

    def fails(self, entry: Entry) -> bool:
        rho = self.entries[entry].spearman["cascade"][self.verdict_step]
        return rho is not None and rho >= self.fail_at

    def verdict(self, entry: Entry) -> str:
        """One sentence, from the numbers at the verdict step: whether the entry fails, and why."""
        rho = self.entries[entry].spearman["cascade"][self.verdict_step]
        overlap = self.entries[entry].top_k_overlap["cascade"][self.verdict_step]
        if rho is None:
            reading = "its word scores are all equal (ρ undefined): the explanation depends on the weights"
        elif self.fails(entry):
            reading = (f"its word scores still correlate with the trained model's at Spearman's ρ = {rho:.2f}, at "
                       f"least {self.fail_at}: the explanation barely depends on the weights")
        else:
            reading = (f"its word scores correlate with the trained model's at Spearman's ρ = {rho:.2f}, under "
                       f"{self.fail_at}: the explanation depends on the weights")
        return (f"{entry.label} {'fails' if self.fails(entry) else 'passes'} the sanity check: with the QA head "
                f"and every block randomised, {reading}; {overlap:.0%} of its top-{self.k} words stay in its top "
                f"{self.k}.")

    def to_dict(self) -> dict:
        """The `sanity` section of `python -m rcqa faithfulness --sanity --json F` (docs/cli.md)."""
        return {
            "k": self.k, "fail_at": self.fail_at, "seed": self.seed, "seconds": self.seconds,
            "passage_words": [w.text for w in self.words],
            "parts": [{"label": p.label, "modules": list(p.modules)} for p in self.parts],
            "verdict_step": self.verdict_step,
            "methods": {entry.name: {"label": entry.label, "method": entry.method,
                                     **{series: {"spearman": found.spearman[series],
                                                 "top_k_overlap": found.top_k_overlap[series]} for series in SERIES},
                                     "fails": self.fails(entry), "verdict": self.verdict(entry)}
                        for entry, found in self.entries.items()},
        }


def model_parts(qa_model: QAModel) -> list[Part]:
    """The parts randomised, from the top down (module docstring). Blocks are the distinct block modules: a model
    that shares one block among its calls (ALBERT) has one."""
    model, adapter = qa_model.model, qa_model.adapter
    if adapter.head is None:
        raise ValueError(f"{qa_model.architecture}'s QA head is not one linear layer rcqa finds, so its weights "
                         "cannot be randomised from the top down")
    names = {id(module): name for name, module in model.named_modules()}
    blocks = [block for blocks in adapter.blocks for block in blocks]
    embeddings = getattr(model.base_model, "embeddings", None) or model.get_input_embeddings()
    return [Part("QA head", tuple(names[id(m)] for m in (*adapter.final, adapter.head))),
            *(Part(f"block {index}", (names[id(block)],)) for index, block in reversed(list(enumerate(blocks)))),
            Part("embeddings", (names[id(embeddings)],))]


def randomise(model: torch.nn.Module, part: Part, seed: int) -> None:
    """Re-initialise the part's modules in place with the model's own initialiser, seeded; the global random state
    is restored afterwards (forked), so other draws are not moved."""
    init_weights = getattr(model, "_init_weights", None)
    if not callable(init_weights):
        raise ValueError(f"{type(model).__name__} has no _init_weights, so its weights cannot be re-initialised")
    device = next(model.parameters()).device
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []), torch.no_grad():
        torch.manual_seed(seed)
        for name in part.modules:
            for module in model.get_submodule(name).modules():
                init_weights(module)


def sanity_checks(qa_model: QAModel, example: Example, methods: Sequence[str] = COMPARED,
                  settings: ExplainSettings | None = None, k: int = TOP_K, seed: int = 0,
                  progress: Callable[[float, str], None] | None = None) -> SanityCheck:
    """Every method's word scores on the trained model and on each randomised one (module docstring), compared;
    the random baseline is always among them (seeded with `seed`, as each part's weights are with seed + its index).
    `progress` is told (the share of the work done, where it is) after each method on each model, the share weighed
    by the methods' passes (rcqa.faithfulness.cost: every model costs the same)."""
    settings, started = settings or ExplainSettings(), time.perf_counter()
    case = Case.of(qa_model, example, settings.targets[0], settings.span, settings.allow_null)
    names = [*dict.fromkeys(m for m in methods if m != RandomBaseline.name), RandomBaseline.name]
    words = case.passage_words()
    parts = model_parts(qa_model)
    total, spent = 1 + len(SERIES) * len(parts), passes_after_each(settings, names)

    def scored(model: int, where: str) -> Callable[[int], None]:
        """What `progress` hears as the methods finish on the model-th model (0: the trained one)."""
        return lambda index: None if progress is None else progress(
            (model + spent[index] / spent[-1]) / total, f"{where} (model {model + 1} of {total}): method {index + 1} of "
                                             f"{len(names)}, {METHODS[names[index]].label}")

    original = _word_scores(case, names, settings, seed, words, scored(0, "the trained model"))
    found: dict[str, list[dict[Entry, np.ndarray]]] = {series: [] for series in SERIES}
    cascade = _private(qa_model)
    for index, part in enumerate(parts):
        randomise(cascade.model, part, seed + index)
        alone = _private(qa_model)
        randomise(alone.model, part, seed + index)
        for series, randomised in zip(SERIES, (cascade, alone)):
            model = 1 + len(SERIES) * index + SERIES.index(series)
            where = f"{part.label} randomised {'with those above it' if series == 'cascade' else 'alone'}"
            found[series].append(_word_scores(Case(randomised, example, case.window, settings.targets[0]), names,
                                              settings, seed, words, scored(model, where)))
    k = min(k, len(words))
    entries = {entry: EntryResult(
        {series: [rank_correlation(original[entry], step[entry]) for step in found[series]] for series in SERIES},
        {series: [top_k_overlap(original[entry], step[entry], k) for step in found[series]] for series in SERIES})
        for entry in original}
    return SanityCheck(example, qa_model.name, words, parts, entries, k, seed, time.perf_counter() - started)


def _private(qa_model: QAModel) -> QAModel:
    """The model with a weight copy of its own (its adapter and fingerprint found anew)."""
    return dataclasses.replace(qa_model, model=copy.deepcopy(qa_model.model).eval())


def _word_scores(case: Case, methods: list[str], settings: ExplainSettings, seed: int,
                 words: list[Word], scored: Callable[[int], None]) -> dict[Entry, np.ndarray]:
    """Per entry, its passage-word scores (normalised as compare's: special tokens 0, over the largest |score|);
    scored(i) once the i-th method is done."""
    scores: dict[Entry, np.ndarray] = {}
    for index, method in enumerate(methods):
        found = make_method(method, settings, seed).attribute(case)
        for ranking in METHODS[method].rankings:
            scores[Entry(method, ranking)] = word_scores(normalised(found[ranking], case.special), words)
        scored(index)
    return scores


def top_k_overlap(original: np.ndarray, randomised: np.ndarray, k: int) -> float:
    """The share of the original's top-k words (highest scores first, a tie in text order) in the randomised top k."""
    def top(scores: np.ndarray) -> set[int]:
        return set(np.argsort(-scores, kind="stable")[:k].tolist())

    return len(top(original) & top(randomised)) / k if k else 1.0


def sanity_seconds(qa_model: QAModel, settings: ExplainSettings, methods: Sequence[str], tokens: int) -> float:
    """The expected seconds of sanity_checks on one window of `tokens` tokens (rcqa.attribution.cost's model of the
    work): per model (the trained one and two per part), each method's block passes through all L blocks, each
    12 h² multiply-adds per token forward and twice that backward, plus the forward that records the layer outputs.
    IG is the costly one: its expected path points (the adaptive rule refines further on a randomised model, up to
    max_steps: sanity_price's worst case)."""
    models = 1 + len(SERIES) * len(model_parts(qa_model))
    return pass_seconds(qa_model, models * scoring_passes(settings, methods), tokens)


def sanity_price(qa_model: QAModel, settings: ExplainSettings, methods: Sequence[str], tokens: int) -> Price:
    """sanity_seconds, and at worst (IG refined up to max_steps on every model), with the path point's memory."""
    expected, worst = (sanity_seconds(qa_model, chosen, methods, tokens) for chosen in (settings, worst_case(settings)))
    return Price(expected, worst, point_memory_mb(qa_model, tokens))
