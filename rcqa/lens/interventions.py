"""Whether a layer's top words matter at that layer: knock them out there and see what the model answers.

At layer l (the output of the l-th block the model runs, labelled as its adapter labels it; layer 0 the
embeddings), the states of the layer's top-k passage words by their IG word scores (every word-piece of each word)
are replaced by a baseline: the layer's own states for the input with every token but [CLS]/[SEP] replaced by
[PAD], or the zero vector (the paper's released code). The
blocks above l and the QA head then run on the changed states (LayerStack.run_from, one batch per layer), and the
probability of the explained span and the answer are read again. The same is done for k random passage words
(seeded draws) and for the bottom-k words, and each whole block is skipped in turn (replaced by the identity:
what it was called with goes on as its output, which is the layer below's only in a plain chain; an
encoder-decoder's first decoder block is called with the decoder's embeddings).

By default the words are chosen outside the explained span (`outside_span`): a layer's top words are mostly the
answer's own, and knocking out the answer itself lowers its probability whatever ranked it first, so only the
knock-outs of the context tell what a layer's ranking adds. The span's words may be chosen with outside_span=False.

Probabilities are those of whole-word answers in the analysed window, decoded as the model's answers are
(rcqa.spans); for a passage read in one window they are the answer's own probabilities. An answer flips when the
window's best answer after the change is another text span than before it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from rcqa.analysis.words import passage_distribution, word_scores
from rcqa.attribution.window import baseline_stack, window_inputs
from rcqa.attribution.stack import LayerStack
from rcqa.model import QAModel
from rcqa.qa import encode
from rcqa.spans import Windows, answer_standing, decode
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution, ResultHeader, Span, Word

KNOCKOUT_BASELINES = {
    "pad": "the layer's states for the input with every token but [CLS]/[SEP] replaced by [PAD]",
    "zero": "the zero vector (the paper's released code)",
}


@dataclass(frozen=True)
class Outcome:
    """What the model answers after one change: the passage words whose states were replaced (none for a skipped
    block) with their signed scores, the explained span's probability, the window's best answer, and whether that
    answer changed."""

    words: tuple[str, ...]
    span_probability: float
    answer: str
    flipped: bool
    signed_scores: tuple[float, ...] = ()  # the words' signed scores at the layer (below 0: against the span)

    def to_dict(self, unchanged: float) -> dict:
        return {"words": list(self.words), "signed_scores": list(self.signed_scores),
                "span_probability": self.span_probability, "drop": unchanged - self.span_probability,
                "flipped": self.flipped, "answer": self.answer}

    @classmethod
    def from_dict(cls, data: dict) -> Outcome:  # files written before the signed scores were kept have none
        return cls(tuple(data["words"]), data["span_probability"], data["answer"], data["flipped"],
                   tuple(data.get("signed_scores", ())))


@dataclass(frozen=True)
class LayerKnockouts:
    """One layer's interventions; skip_block is None at the embeddings, which no block outputs."""

    layer: int
    label: str
    topk: Outcome
    bottomk: Outcome
    random: tuple[Outcome, ...]
    skip_block: Outcome | None


@dataclass(frozen=True)
class KnockoutSettings:
    """What was knocked out and how: k words per layer, random draws from seed, the baseline the words' states are
    replaced by, the token score (aggregation) and target that rank the words, and whether the explained span's
    own words were spared."""

    k: int
    draws: int
    seed: int
    baseline: str
    aggregation: Aggregation
    target: str
    outside_span: bool

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(repr=False)
class Interventions(ResultHeader):
    """Every layer's interventions on one explained example (its header the explanation's), and the settings that
    produced them."""

    explained_span: str
    unchanged: Outcome  # the model's own reading of the window, nothing replaced
    layers: list[LayerKnockouts]
    settings: KnockoutSettings

    kind = "interventions"

    @property
    def question(self) -> str:
        return self.example.question

    def to_dict(self) -> dict:
        p = self.unchanged.span_probability
        return {
            **self.header_dict(), "question": self.question,
            "explained_span": self.explained_span, "settings": self.settings.to_dict(),
            "unchanged": {"span_probability": p, "answer": self.unchanged.answer},
            "layers": [{"layer": knockouts.layer, "label": knockouts.label,
                        "topk": knockouts.topk.to_dict(p), "bottomk": knockouts.bottomk.to_dict(p),
                        "random": _summary(knockouts.random, p),
                        "skip_block": knockouts.skip_block.to_dict(p) if knockouts.skip_block else None}
                       for knockouts in self.layers],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Interventions:
        unchanged = data["unchanged"]
        return cls(**cls.header_fields(data), explained_span=data["explained_span"],
                   unchanged=Outcome((), unchanged["span_probability"], unchanged["answer"], False),
                   layers=[LayerKnockouts(layer["layer"], layer["label"], Outcome.from_dict(layer["topk"]),
                                          Outcome.from_dict(layer["bottomk"]),
                                          tuple(Outcome.from_dict(d) for d in layer["random"]["draws"]),
                                          Outcome.from_dict(layer["skip_block"]) if layer["skip_block"] else None)
                           for layer in data["layers"]],
                   settings=KnockoutSettings(**data["settings"]))


def _summary(draws: tuple[Outcome, ...], unchanged: float) -> dict:
    """Mean and spread (population standard deviation, min, max) over the random draws, and each draw."""
    probabilities = np.array([d.span_probability for d in draws])
    return {"span_probability_mean": float(probabilities.mean()), "span_probability_std": float(probabilities.std()),
            "span_probability_min": float(probabilities.min()), "span_probability_max": float(probabilities.max()),
            "drop_mean": float(unchanged - probabilities.mean()),
            "flip_rate": float(np.mean([d.flipped for d in draws])),
            "draws": [d.to_dict(unchanged) for d in draws]}


def random_words(candidates: np.ndarray, k: int, draws: int, seed: int, layer: int) -> list[np.ndarray]:
    """draws sets of k distinct passage-word indices among the candidates (all of them if there are fewer), from a
    generator seeded by (seed, layer): the same seed gives the same words, and one layer's draws do not depend on
    another's."""
    generator = np.random.default_rng((seed, layer))
    return [generator.choice(candidates, size=min(k, len(candidates)), replace=False) for _ in range(draws)]


def bottom_k(distribution: np.ndarray, k: int, candidates: np.ndarray) -> np.ndarray:
    """The k candidate passage words with the smallest share of one layer's distribution, least first."""
    return candidates[np.argsort(distribution[candidates], kind="stable")[:k]]


def top_k_of(distribution: np.ndarray, k: int, candidates: np.ndarray) -> np.ndarray:
    """The (at most) k candidate passage words with the largest share of one layer's distribution, greatest first
    (a tie keeps text order); a word with no attribution is never a top word."""
    best = candidates[np.argsort(-distribution[candidates], kind="stable")[:k]]
    return best[distribution[best] > 0]


def outside(words: list[Word], start_token: int, end_token: int) -> np.ndarray:
    """Indices of the passage words none of whose tokens lies in the span's tokens start_token..end_token."""
    return np.array([i for i, w in enumerate(words) if not any(start_token <= t <= end_token for t in w.tokens)],
                    dtype=int)


def intervene(qa_model: QAModel, result: Attribution, k: int = 5, draws: int = 5, baseline: str = "pad",
              aggregation: Aggregation = DEFAULT_AGGREGATION, seed: int = 0, outside_span: bool = True) -> Interventions:
    """Knock out each layer's top-k, bottom-k and k random passage words (outside the explained span unless
    outside_span is False), and skip each block, for the span the result's first target explains, ranking words
    by that target's IG word scores under aggregation."""
    if baseline not in KNOCKOUT_BASELINES:
        raise ValueError(f"unknown knock-out baseline {baseline!r}; choose one of {', '.join(KNOCKOUT_BASELINES)}")
    if k < 0 or draws < 1:
        raise ValueError("k must be at least 0 and draws at least 1")
    if result.fingerprint != qa_model.fingerprint:
        raise ValueError(f"the result was computed with model {result.fingerprint}, not with {qa_model.name} "
                         f"({qa_model.fingerprint}); explain it with this model first")
    example = result.example
    windows = encode(qa_model, example.question, example.passage)
    inputs = window_inputs(windows, result.window)
    stack = LayerStack(qa_model.model, {key: value.to(qa_model.device) for key, value in inputs.items()})
    baselines = baseline_stack(qa_model, inputs, baseline)
    reader = _WindowReader(_one_window(windows, result.window, inputs["input_ids"].shape[1]), example.passage,
                           (0, *result.targets[0].tokens),
                           stack.start_logits, stack.end_logits)
    distribution = passage_distribution(result, aggregation)
    signed = signed_passage_scores(result)
    words = result.passage_words()
    target = result.targets[0]
    candidates = outside(words, *target.tokens) if outside_span else np.arange(len(words))
    layers = []
    for layer, label in enumerate(result.layers):
        chosen = [top_k_of(distribution[layer], k, candidates), bottom_k(distribution[layer], k, candidates),
                  *random_words(candidates, k, draws, seed, layer)]
        base = baselines.hidden[layer] if baselines else torch.zeros_like(stack.hidden[layer])
        outcomes = _knock_out(stack, layer, base, [[t for i in indices for t in words[i].tokens] for indices in chosen],
                              reader, [tuple(words[i].text for i in indices) for indices in chosen])
        outcomes = [replace(outcome, signed_scores=tuple(float(signed[layer, i]) for i in indices))
                    for outcome, indices in zip(outcomes, chosen)]
        with torch.no_grad():  # block l − 1 skipped: what it was called with goes on as its output
            skipped = reader.outcome(*stack.run_from(layer, stack.block_input(layer)), ()) if layer else None
        layers.append(LayerKnockouts(layer, label, outcomes[0], outcomes[1], tuple(outcomes[2:]), skipped))
    return Interventions(example=example, model=result.model, fingerprint=result.fingerprint, answer=result.answer,
                         window=result.window, tokens=result.tokens, explained_span=target.span,
                         unchanged=reader.unchanged, layers=layers,
                         settings=KnockoutSettings(k, draws, seed, baseline, aggregation, target.name, outside_span))


def signed_passage_scores(result: Attribution) -> np.ndarray:
    """(layers × passage words) each word's signed score for the first target (its attributions summed over the
    hidden dimensions, the methods' "signed" ranking): below 0 the word counts against the span, as a rival
    answer's words do, however large its magnitude, which ranks the top words."""
    return word_scores(result, "sum")[:, result.passage_indices()]


def _knock_out(stack: LayerStack, layer: int, base: torch.Tensor, tokens: list[list[int]], reader: _WindowReader,
               words: list[tuple[str, ...]]) -> list[Outcome]:
    """One outcome per set of tokens: the layer's states with those tokens' replaced by the baseline's, run through
    the blocks above and the head, all sets in one batch."""
    batch = stack.hidden[layer].repeat(len(tokens), 1, 1)
    for row, chosen in enumerate(tokens):
        batch[row, chosen] = base[0, chosen]
    with torch.no_grad():
        start, end = stack.run_from(layer, batch)
    return [reader.outcome(start[row:row + 1], end[row:row + 1], words[row]) for row in range(len(tokens))]


class _WindowReader:
    """Reads the analysed window's logits as the model's answers are read: the explained span's probability and
    the best answer, which has flipped when its characters differ from those of the unchanged answer."""

    def __init__(self, window: Windows, passage: str, explained: tuple[int, int, int], start: torch.Tensor,
                 end: torch.Tensor):
        self.window, self.passage, self.explained = window, passage, explained
        probability, best = self._read(start, end)
        self.reference = _characters(best)
        self.unchanged = Outcome((), probability, best.text if best else "", False)

    def _read(self, start: torch.Tensor, end: torch.Tensor) -> tuple[float, Span | None]:
        start, end = start.float().cpu(), end.float().cpu()
        spans = decode(start, end, self.window, self.passage, n_best=1)
        _, probability = answer_standing(start, end, self.window, self.passage, self.explained)
        return probability, spans[0] if spans else None

    def outcome(self, start: torch.Tensor, end: torch.Tensor, words: tuple[str, ...]) -> Outcome:
        probability, best = self._read(start, end)
        return Outcome(words, probability, best.text if best else "", _characters(best) != self.reference)


def _characters(span: Span | None) -> tuple[int, int] | None:
    return (span.start_char, span.end_char) if span else None


def _one_window(windows: Windows, window: int, length: int) -> Windows:
    """The analysed window alone, without padding, as decode reads it."""
    return replace(windows, inputs={k: v[window:window + 1, :length] for k, v in windows.inputs.items()},
                   offsets=[windows.offsets[window][:length]], passage_mask=windows.passage_mask[window:window + 1, :length],
                   segments=[windows.segments[window][:length]], word_ids=[windows.word_ids[window][:length]])


def intervention_row(interventions: Interventions) -> dict:
    """The interventions as columns of a dataset row, each a list over layers (embeddings first):
    knockout_<kind>_probability and knockout_<kind>_flipped for topk and bottomk; knockout_random_probability_mean,
    _std and knockout_random_flip_rate; skip_block_probability and skip_block_flipped (None at the embeddings);
    and the unchanged probability and settings."""
    settings, layers = interventions.settings, interventions.to_dict()["layers"]
    row = {"knockout_unchanged_probability": interventions.unchanged.span_probability, "knockout_k": settings.k,
           "knockout_draws": settings.draws, "knockout_baseline": settings.baseline,
           "knockout_outside_span": settings.outside_span}
    for kind in ("topk", "bottomk"):
        row[f"knockout_{kind}_probability"] = [layer[kind]["span_probability"] for layer in layers]
        row[f"knockout_{kind}_flipped"] = [layer[kind]["flipped"] for layer in layers]
    for column, name in (("probability_mean", "span_probability_mean"), ("probability_std", "span_probability_std"),
                         ("flip_rate", "flip_rate")):
        row[f"knockout_random_{column}"] = [layer["random"][name] for layer in layers]
    skips = [layer["skip_block"] for layer in layers]
    row["skip_block_probability"] = [skip["span_probability"] if skip else None for skip in skips]
    row["skip_block_flipped"] = [skip["flipped"] if skip else None for skip in skips]
    return row
