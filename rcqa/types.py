"""The data types that flow through the library: examples in, answers and attributions out."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from rcqa.text import is_punctuation


@dataclass(frozen=True)
class GoldAnswer:
    text: str
    start_char: int


@dataclass(frozen=True)
class Example:
    """One reading-comprehension question about one passage, from any source."""

    id: str
    passage: str
    question: str
    title: str = ""
    answers: tuple[GoldAnswer, ...] = ()
    is_impossible: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def overlaps(start: int, end: int, other_start: int, other_end: int) -> bool:
    """Whether the characters [start, end) and [other_start, other_end) share one."""
    return start < other_end and other_start < end


@dataclass(frozen=True)
class Span:
    """A candidate answer: a token span of one window, mapped back to passage characters."""

    text: str
    start_char: int
    end_char: int
    start_token: int
    end_token: int
    window: int
    start_logit: float
    end_logit: float
    probability: float = 0.0

    @property
    def score(self) -> float:
        return self.start_logit + self.end_logit

    def overlaps(self, start_char: int, end_char: int) -> bool:
        """Whether the text at [start_char, end_char) shares a character with the span."""
        return overlaps(self.start_char, self.end_char, start_char, end_char)

    def to_dict(self) -> dict:
        return {**asdict(self), "score": self.score}


@dataclass(frozen=True)
class NoAnswer:
    """A SQuAD 2.0 model's "no answer": its score (start + end logit at [CLS], in the window where that is
    smallest), its probability in the softmax it shares with every answering span, the threshold on
    score − best span score, and whether the model abstained."""

    score: float
    probability: float
    threshold: float
    chosen: bool
    window: int = 0
    best_span_score: float | None = None  # the best valid token span's start + end logit (None: no valid span)

    def to_dict(self) -> dict:
        return asdict(self)

    def nbest_entry(self) -> dict:
        """The null as an n-best entry: text "", labelled "no answer"."""
        return {"text": "", "label": "no answer", "no_answer": True, "score": self.score,
                "probability": self.probability, "window": self.window}


@dataclass(frozen=True)
class Answer:
    """The model's answer to an Example: the best span and the n-best list it won against, and, for a model
    that may abstain, its "no answer"."""

    question: str
    nbest: tuple[Span, ...]  # answering spans only: nbest:K of an explanation counts these
    n_windows: int
    settings: dict = field(default_factory=dict)
    no_answer: NoAnswer | None = None  # None where decoding did not allow "no answer"

    @property
    def best(self) -> Span | None:
        """The best span, also when the model abstained (then it is the span it rejected)."""
        return self.nbest[0] if self.nbest else None

    @property
    def abstained(self) -> bool:
        return self.no_answer is not None and self.no_answer.chosen

    @property
    def text(self) -> str:
        return self.best.text if self.best and not self.abstained else ""

    @property
    def null_odds(self) -> float:
        """null score − best span score, what the threshold is on (the v2.0 script's na_prob); inf with no span."""
        null = self.no_answer
        if null is None:
            raise ValueError("this answer was decoded without 'no answer'")
        return float("inf") if null.best_span_score is None else null.score - null.best_span_score

    def ranked(self) -> list[dict]:
        """The n-best list as written out: the spans, and "no answer" at its place by probability."""
        entries = [{**span.to_dict(), "no_answer": False} for span in self.nbest]
        if self.no_answer is None:
            return entries
        place = sum(1 for span in self.nbest if span.probability > self.no_answer.probability)
        return [*entries[:place], self.no_answer.nbest_entry(), *entries[place:]]

    def to_dict(self) -> dict:
        best = None if self.abstained else self.best
        return {
            "question": self.question,
            "answer": self.text,
            "start_char": best.start_char if best else None,
            "end_char": best.end_char if best else None,
            "score": best.score if best else None,
            "probability": best.probability if best else None,
            "window": best.window if best else None,
            "n_windows": self.n_windows,
            "nbest": self.ranked(),
            "no_answer": self.no_answer.to_dict() if self.no_answer else None,
            "settings": self.settings,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Answer:
        spans = tuple(Span(**{k: v for k, v in s.items() if k not in ("score", "no_answer")})
                      for s in data["nbest"] if not s.get("no_answer"))
        null = data.get("no_answer")
        return cls(question=data["question"], nbest=spans, n_windows=data["n_windows"], settings=data["settings"],
                   no_answer=NoAnswer(**null) if null else None)


NULL_TARGETS = ("null", "answer_vs_null")  # targets that explain "no answer": their span is the best one, rejected

# token score from its attribution vector: L2 norm (the paper's code), signed sum, |.| sum, squared L2 norm
# (the paper's text)
AGGREGATIONS = ("l2", "sum", "abs_sum", "l2_squared")


@dataclass(frozen=True)
class Word:
    """A word as written (a spaCy token) of the question or passage, its Penn Treebank tag, and the window
    tokens (word-pieces) mapped onto it."""

    text: str
    start_char: int
    end_char: int
    segment: str  # "question" or "passage"
    tokens: tuple[int, ...]
    tag: str = ""

    @property
    def is_punctuation(self) -> bool:
        """Punctuation is no word: it counts in no category, window, top-k or distribution."""
        return is_punctuation(self.text)


@dataclass(frozen=True)
class Completeness:
    """IG's completeness check at one layer: Σ attributions should equal F(input) − F(baseline)."""

    layer: int
    target: str
    steps: int
    f_input: float
    f_baseline: float
    attribution_sum: float

    @property
    def delta(self) -> float:
        return self.f_input - self.f_baseline

    @property
    def relative_error(self) -> float:
        return abs(self.attribution_sum - self.delta) / max(abs(self.delta), 1e-9)

    def to_dict(self) -> dict:
        return {**asdict(self), "delta": self.delta, "relative_error": self.relative_error}


@dataclass
class Attribution:
    """Everything one explanation holds: the answer, the analysed window's tokens and words, and
    per target, aggregation, layer and token the Integrated-Gradients score, with completeness checks.

    scores has shape (targets, len(AGGREGATIONS), layers, tokens); hidden_states (layers, tokens, dim)
    keeps the layer outputs for projections. Pages render it, the CLI writes it, the cache stores it.
    """

    example: Example
    model: str
    fingerprint: str
    answer: Answer
    window: int
    tokens: list[str]
    token_offsets: list[tuple[int, int]]
    token_segments: list[str]
    words: list[Word]
    layers: list[str]
    targets: list[dict]  # name, description, start_token, end_token, span text
    scores: np.ndarray
    completeness: list[Completeness]
    settings: dict
    seconds: float = 0.0
    hidden_states: np.ndarray | None = None

    def layer_scores(self, aggregation: str = "l2", target: int = 0) -> np.ndarray:
        """(layers, tokens) scores of one target under one aggregation."""
        return self.scores[target, AGGREGATIONS.index(aggregation)]

    def passage_indices(self) -> list[int]:
        """Indices into words of the passage's words in the analysed window, in text order; punctuation is not
        a word."""
        return [i for i, w in enumerate(self.words) if w.segment == "passage" and not w.is_punctuation]

    def passage_words(self) -> list[Word]:
        return [self.words[i] for i in self.passage_indices()]

    def explained_span(self, target: int = 0) -> tuple[int, int]:
        """[start_char, end_char) of the span the target explains (the prediction, the gold or an n-best span)."""
        chosen = self.targets[target]
        return self.token_offsets[chosen["start_token"]][0], self.token_offsets[chosen["end_token"]][1]

    def to_dict(self, include_hidden: bool = False) -> dict:
        data = {
            "example": self.example.to_dict(), "model": self.model, "fingerprint": self.fingerprint,
            "answer": self.answer.to_dict(), "window": self.window, "tokens": self.tokens,
            "token_offsets": [list(o) for o in self.token_offsets], "token_segments": self.token_segments,
            "words": [asdict(w) for w in self.words], "layers": self.layers, "targets": self.targets,
            "aggregations": list(AGGREGATIONS), "scores": self.scores.tolist(),
            "completeness": [c.to_dict() for c in self.completeness], "settings": self.settings,
            "seconds": self.seconds,
        }
        if include_hidden and self.hidden_states is not None:
            data["hidden_states"] = self.hidden_states.tolist()
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Attribution:
        example = data["example"]
        return cls(
            example=Example(**{**example, "answers": tuple(GoldAnswer(**a) for a in example["answers"])}),
            model=data["model"], fingerprint=data["fingerprint"],
            answer=Answer.from_dict(data["answer"]),
            window=data["window"], tokens=data["tokens"],
            token_offsets=[tuple(o) for o in data["token_offsets"]], token_segments=data["token_segments"],
            words=[Word(**{**w, "tokens": tuple(w["tokens"])}) for w in data["words"]],
            layers=data["layers"], targets=data["targets"], scores=np.asarray(data["scores"], dtype=np.float64),
            completeness=[Completeness(**{k: c[k] for k in ("layer", "target", "steps", "f_input", "f_baseline",
                                                             "attribution_sum")}) for c in data["completeness"]],
            settings=data["settings"], seconds=data["seconds"],
            hidden_states=np.asarray(data["hidden_states"], dtype=np.float32) if "hidden_states" in data else None,
        )
