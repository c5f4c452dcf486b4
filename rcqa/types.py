"""The data types that flow through the library: examples in, answers and attributions out."""
from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from rcqa.text import is_punctuation


@dataclass(frozen=True, slots=True)  # slots: an uploaded file's answers and questions, 100 bytes less each
class GoldAnswer:
    text: str
    start_char: int


@dataclass(frozen=True, slots=True)
class Example:
    """One reading-comprehension question about one passage, from any source."""

    id: str
    passage: str
    question: str
    title: str = ""
    answers: tuple[GoldAnswer, ...] = ()
    is_impossible: bool = False

    @classmethod
    def of(cls, passage: str, question: str, gold: str | Sequence[str] = (), id: str = "python") -> Example:
        """An Example of plain strings; each gold answer text is placed where it first occurs in the passage."""
        if not isinstance(passage, str) or not isinstance(question, str):
            raise TypeError("the passage and the question are strings")
        texts = (gold,) if isinstance(gold, str) else tuple(gold)
        missing = [text for text in texts if text not in passage]
        if missing:
            raise ValueError(f"the gold answer {missing[0]!r} is not in the passage")
        return cls(id=id, passage=passage, question=question,
                   answers=tuple(GoldAnswer(text, passage.find(text)) for text in texts))

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
# what a compact result file keeps (the result cache's): l2_squared is l2², rebuilt on reading, and the rest are
# float32 where they fit (dataset runs keep thousands of results, and float64 doubled their size for digits beyond
# the engine's float32 arithmetic)
COMPACT_AGGREGATIONS = tuple(name for name in AGGREGATIONS if name != "l2_squared")
VIEWS = ("heatmap", "top-k", "roles", "jsd")  # what Attribution.show draws


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
    """IG's completeness check at one layer: Σ attributions should equal F(input) − F(baseline); or (kind
    "conservation") AttnLRP's: Σ relevance should equal F, with f_baseline 0."""

    layer: int
    target: str
    steps: int
    f_input: float
    f_baseline: float
    attribution_sum: float
    window_sums: tuple[float, ...] = ()  # a whole-passage explanation: Σ attributions of each window's tokens
    kind: str = "completeness"  # or "conservation"

    @property
    def delta(self) -> float:
        return self.f_input - self.f_baseline

    @property
    def relative_error(self) -> float:
        return abs(self.attribution_sum - self.delta) / max(abs(self.delta), 1e-9)

    def to_dict(self) -> dict:
        data = {**asdict(self), "delta": self.delta, "relative_error": self.relative_error}
        if not self.window_sums:
            del data["window_sums"]
        if self.kind == "completeness":  # as results were written before AttnLRP
            del data["kind"]
        return data


@dataclass
class Attribution:
    """Everything one explanation holds: the answer, the analysed window's tokens and words, and
    per target, aggregation, layer and token the Integrated-Gradients score, with completeness checks.

    scores has shape (targets, len(AGGREGATIONS), layers, tokens); hidden_states (layers, tokens, dim)
    keeps the layer outputs for projections: of every token, or of those hidden_tokens names (a whole passage
    keeps its explained window's). Pages render it, the CLI writes it, the cache stores it.
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
    hidden_tokens: list[int] | None = None  # the tokens hidden_states holds, in its order; None: every token

    def layer_scores(self, aggregation: str = "l2", target: int = 0) -> np.ndarray:
        """(layers, tokens) scores of one target under one aggregation."""
        return self.scores[target, AGGREGATIONS.index(aggregation)]

    @property
    def whole_passage(self) -> bool:
        """Whether the result explains every window of the passage at once (rcqa.attribution.passage): its tokens
        and words are then the whole passage's."""
        return self.settings.get("windows") == "all"

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

    def show(self, view: str = "heatmap", k: int = 5, aggregation: str = "l2", target: int = 0):
        """The Plotly figure of one view: "heatmap" (layers × words), "top-k" (each layer's k best words), "roles"
        (what those words are) or "jsd" (how differently the layers spread their attribution)."""
        from rcqa.figures.views import view_chart  # the figures draw results: plotly loads only when one is drawn

        return view_chart(self, view, k, aggregation, target).figure

    def _repr_html_(self) -> str:
        """Jupyter's view: the answer, the heatmap and the last layer's top-5 passage words, as escaped HTML."""
        from rcqa.figures.views import notebook_html

        return notebook_html(self)

    def save(self, path: str | Path) -> Path:
        """Write the whole result, exactly: .json (the `explain --json` fields, with the layer outputs) or .npz
        (the result cache's format); rcqa.load_result reads either back."""
        path = Path(path)
        if path.suffix == ".json":
            path.write_text(json.dumps(self.to_dict(include_hidden=True), ensure_ascii=False))
        elif path.suffix == ".npz":
            path.write_bytes(self.to_npz())
        else:
            raise ValueError(f"save a result as .json or .npz, not {path.name!r}")
        return path

    def to_npz(self, compact: bool = False) -> bytes:
        """The result cache's file: the fields as JSON, the scores and the layer outputs as arrays. Compact (what
        the cache stores) keeps COMPACT_AGGREGATIONS as float32 where they fit; otherwise every score is exact."""
        meta = {**self.to_dict(), "stored_aggregations": list(COMPACT_AGGREGATIONS if compact else AGGREGATIONS)}
        del meta["scores"]
        arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                  "scores": compact_scores(self.scores) if compact else self.scores}
        if self.hidden_states is not None:
            arrays["hidden_states"] = self.hidden_states
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)  # the words' JSON shrinks fivefold; runs keep thousands
        return buffer.getvalue()

    @classmethod
    def from_npz(cls, file, largest_states: float = math.inf) -> Attribution:
        """A result from a file to_npz wrote (a path or an open binary file); older files hold every aggregation.
        Layer outputs of more than `largest_states` bytes are left out unread (a whole passage's every window, as
        results kept before they kept one window's)."""
        with np.load(file, allow_pickle=False) as stored:
            data = json.loads(stored["meta"].tobytes().decode())
            data["scores"] = full_scores(stored["scores"], data.pop("stored_aggregations", AGGREGATIONS))
            if "hidden_states" in stored and stored.zip.getinfo("hidden_states.npy").file_size <= largest_states:
                data["hidden_states"] = stored["hidden_states"]
        return cls.from_dict(data)

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
        if self.hidden_states is not None and self.hidden_tokens is not None:
            data["hidden_tokens"] = self.hidden_tokens
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
                                                             "attribution_sum")},
                                       window_sums=tuple(c.get("window_sums", ())),
                                       kind=c.get("kind", "completeness")) for c in data["completeness"]],
            settings=data["settings"], seconds=data["seconds"],
            hidden_states=np.asarray(data["hidden_states"], dtype=np.float32) if "hidden_states" in data else None,
            hidden_tokens=data.get("hidden_tokens") if "hidden_states" in data else None,
        )


def compact_scores(scores: np.ndarray) -> np.ndarray:
    """(targets, COMPACT_AGGREGATIONS, layers, tokens): float32, or float64 where a value would overflow float32 (a
    path that leaves the model's range, e.g. a zero baseline under LayerNorm, reaches 1e24 and more)."""
    kept = scores[:, [AGGREGATIONS.index(name) for name in COMPACT_AGGREGATIONS]]
    return kept.astype(np.float32) if np.all(np.abs(kept) <= np.finfo(np.float32).max) else kept


def full_scores(stored: np.ndarray, aggregations) -> np.ndarray:
    """Every aggregation of AGGREGATIONS, in float64, from the ones a file holds."""
    scores = np.empty((stored.shape[0], len(AGGREGATIONS), *stored.shape[2:]), dtype=np.float64)
    for index, name in enumerate(aggregations):
        scores[:, AGGREGATIONS.index(name)] = stored[:, index]
    if "l2_squared" not in aggregations:
        scores[:, AGGREGATIONS.index("l2_squared")] = scores[:, AGGREGATIONS.index("l2")] ** 2
    return scores


def load_result(path: str | Path) -> Attribution:
    """An Attribution that Attribution.save, `rcqa explain --json` or the result cache wrote."""
    path = Path(path)
    if path.suffix == ".npz":
        return Attribution.from_npz(path)
    return Attribution.from_dict(json.loads(path.read_text(encoding="utf-8")))
