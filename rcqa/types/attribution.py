"""An explanation: per target, aggregation, layer and token the attribution score, with the completeness checks,
the typed targets and settings that produced it; written to and read from JSON and the result cache's .npz."""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from rcqa.types import storage
from rcqa.types.answers import Word
from rcqa.types.granularity import Granularity, UnitScores, unit_scores
from rcqa.types.header import ResultHeader
from rcqa.types.method_settings import PATH_FIELDS, MethodSettings
from rcqa.types.settings import ExplainSettings, Windowing, split_recorded_settings
from rcqa.types.targets import ExplainedTarget

# token score from its attribution vector: L2 norm (the paper's code), signed sum, |.| sum, squared L2 norm
# (the paper's text); a result's scores hold them in this order
Aggregation = Literal["l2", "sum", "abs_sum", "l2_squared"]
AGGREGATIONS: tuple[Aggregation, ...] = get_args(Aggregation)
DEFAULT_AGGREGATION: Aggregation = "l2"  # what an analysis reads when neither its caller nor a preset names one
# what a compact result file keeps (the result cache's): l2_squared is l2², rebuilt on reading, and the rest are
# float32 where they fit (dataset runs keep thousands of results, and float64 doubled their size for digits beyond
# the engine's float32 arithmetic)
COMPACT_AGGREGATIONS: tuple[Aggregation, ...] = tuple(name for name in AGGREGATIONS if name != "l2_squared")
# what Attribution.figure and show draw: the Explore page's views of one explanation (the answer lens, the knock-outs
# and the attention heads need the model: rcqa.lens, rcqa.intervene and rcqa.heads return results that show them)
VIEWS = ("heatmap", "overview", "start-end", "top-k", "top-k-passage", "top-k-grid", "roles", "pos", "quantifiers",
         "word", "completeness", "ledger", "jsd")


@dataclass(frozen=True)
class Completeness:
    """IG's completeness check at one layer: Σ attributions should equal F(input) − F(baseline); or (kind
    "conservation") AttnLRP's: Σ relevance against the relevance entering at the target (`entering`, logits ⊙
    ∂F/∂logits; F itself in files written before it was kept), with F as f_input and f_baseline 0, and the ledger
    (`absorbed`: what each absorbing rule took between the logits and this layer, by kind), so that entering −
    Σ absorbed = Σ relevance."""

    layer: int
    target: str
    steps: int
    f_input: float
    f_baseline: float
    attribution_sum: float
    window_sums: tuple[float, ...] = ()  # a whole-passage explanation: Σ attributions of each window's tokens
    kind: str = "completeness"  # or "conservation"
    entering: float | None = None
    absorbed: dict[str, float] | None = None

    @property
    def delta(self) -> float:
        return self.f_input - self.f_baseline

    @property
    def expected(self) -> float:
        """What Σ attributions should equal: ΔF, or for AttnLRP the relevance that entered at the target."""
        return self.delta if self.entering is None else self.entering

    @property
    def relative_error(self) -> float:
        return abs(self.attribution_sum - self.expected) / max(abs(self.expected), 1e-9)

    @property
    def unaccounted(self) -> float | None:
        """AttnLRP's: entering − Σ absorbed − Σ relevance, which the ledger leaves unexplained (None without one)."""
        if self.entering is None or self.absorbed is None:
            return None
        return self.entering - sum(self.absorbed.values()) - self.attribution_sum

    def to_dict(self) -> dict:
        data = {**asdict(self), "delta": self.delta, "relative_error": self.relative_error}
        if not self.window_sums:
            del data["window_sums"]
        for optional in ("entering", "absorbed"):  # IG's, as results were written before AttnLRP kept them
            if data[optional] is None:
                del data[optional]
        if self.kind == "completeness":  # as results were written before AttnLRP
            del data["kind"]
        return data


@dataclass(repr=False)
class Attribution(ResultHeader):
    """Everything one explanation holds: the answer, the analysed window's tokens and words, and
    per target, aggregation, layer and token the Integrated-Gradients score, with completeness checks.

    scores has shape (targets, len(AGGREGATIONS), layers, tokens); hidden_states (layers, tokens, dim)
    keeps the layer outputs for projections: of every token, or of those hidden_tokens names (a whole passage
    keeps its explained window's). Pages render it, the CLI writes it, the cache stores it.
    """

    token_offsets: list[tuple[int, int]]
    token_segments: list[str]
    words: list[Word]
    layers: list[str]
    targets: list[ExplainedTarget]
    scores: np.ndarray
    completeness: list[Completeness]
    settings: ExplainSettings
    windowing: Windowing
    seconds: float = 0.0
    hidden_states: np.ndarray | None = None
    hidden_tokens: list[int] | None = None  # the tokens hidden_states holds, in its order; None: every token
    # when the engine made it (UTC, ISO 8601), kept through the cache and files, so that a result read back says when
    # its `seconds` were spent; None for results written before it was recorded
    computed_at: str | None = field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
    # what the method read of the settings (its own class); None for results written before it was recorded, whose
    # settings hold every path field as the caller passed it
    method_settings: MethodSettings | None = None

    kind = "attribution"

    def layer_scores(self, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> np.ndarray:
        """(layers, tokens) scores of one target under one aggregation."""
        return self.scores[target, AGGREGATIONS.index(aggregation)]

    @property
    def whole_passage(self) -> bool:
        """Whether the result explains every window of the passage at once (rcqa.attribution.passage): its tokens
        and words are then the whole passage's."""
        return self.settings.windows == "all"

    def passage_indices(self) -> list[int]:
        """Indices into words of the passage's words in the analysed window, in text order; punctuation is not
        a word."""
        return [i for i, w in enumerate(self.words) if w.segment == "passage" and not w.is_punctuation]

    def passage_words(self) -> list[Word]:
        return [self.words[i] for i in self.passage_indices()]

    def granularity(self, granularity: Granularity, aggregation: Aggregation = DEFAULT_AGGREGATION,
                    target: int = 0) -> UnitScores:
        """The scores of every layer summed by "token", "word", "phrase" or "sentence" (rcqa.types.granularity): each
        unit scores the sum of its tokens' scores, so a layer's total is the same at every granularity."""
        return unit_scores(self, granularity, aggregation, target)

    def explained_span(self, target: int = 0) -> tuple[int, int]:
        """[start_char, end_char) of the span the target explains (the prediction, the gold or an n-best span)."""
        chosen = self.targets[target]
        return self.token_offsets[chosen.start_token][0], self.token_offsets[chosen.end_token][1]

    def _repr_details(self) -> str:
        targets = ", ".join(t.name for t in self.targets)
        words = len(self.passage_words())
        return f" · {self.settings.method}, {targets} · {len(self.layers)} layers × {words} passage words"

    # an Attribution names the options its views take, where ResultHeader.figure passes on any
    def figure(self, view: str | None = None, *, k: int = 5,  # type: ignore[override]
               aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0, layer: int = -1,
               word: int | None = None):
        """The Plotly figure of one of VIEWS (the heatmap when None), as the Explore page draws it: "heatmap" (layers ×
        words), "overview" (a long passage's pages × layers), "start-end" (the start and end logits apart, for a
        result that explains both), "top-k" (each layer's k best words, a table), "top-k-passage" (the passage with
        `layer`'s top k marked; -1: the last layer), "top-k-grid" (that, every layer), "roles" (what the top words
        are: answer, supporting, query), "pos" (their parts of speech), "quantifiers" (for a how-many question), "word"
        (the passage word of index `word` across layers; None: the answer's first), "completeness" (IG's check per
        layer, AttnLRP's conservation), "ledger" (AttnLRP's), "jsd" (how differently the layers spread their
        attribution). The two passage views are HTML: an object a notebook draws, with write_html as a figure's.
        show(view, ...) takes the same options and shows the figure too."""
        return super().figure(view, k=k, aggregation=aggregation, target=target, layer=layer, word=word)

    def save(self, path: str | Path, hidden_states: bool = False) -> Path:
        """Write the result as .npz (all of it, the layer outputs included) or as .json, which leaves the layer outputs
        out unless hidden_states: they are nearly all of it (the gallery's 81-word lighthouse passage with the default
        model: 6.0 MB with them, 88 kB without) and only the projections (t-SNE / PCA) read them. load or
        rcqa.load_result reads either back; a JSON saved with them (as every one was before) loads them too."""
        return storage.save(self, path, hidden_states=hidden_states)

    def stored_dict(self, hidden_states: bool = False) -> dict:
        return self.to_dict(include_hidden=hidden_states)

    def to_npz(self, compact: bool = False) -> bytes:
        """The result cache's file: the fields as JSON, the scores and the layer outputs as arrays. Compact (what
        the cache stores) keeps COMPACT_AGGREGATIONS as float32 where they fit; otherwise every score is exact."""
        meta = {**self.to_dict(), **self._hidden_tokens(),
                "stored_aggregations": list(COMPACT_AGGREGATIONS if compact else AGGREGATIONS)}
        del meta["scores"]
        arrays = {"scores": compact_scores(self.scores) if compact else self.scores}
        if self.hidden_states is not None:
            arrays["hidden_states"] = self.hidden_states
        return storage.npz_bytes(meta, arrays)

    @classmethod
    def from_npz(cls, file, largest_states: float = math.inf) -> Attribution:
        """A result from a file to_npz wrote (a path or an open binary file); older files hold every aggregation.
        Layer outputs of more than `largest_states` bytes are left out unread (a whole passage's every window, as
        results kept before they kept one window's)."""
        data, arrays = storage.read_npz(file, {"hidden_states": largest_states})
        data["scores"] = full_scores(arrays["scores"], data.pop("stored_aggregations", AGGREGATIONS))
        if "hidden_states" in arrays:
            data["hidden_states"] = arrays["hidden_states"]
        return cls.from_dict(data)

    def to_dict(self, include_hidden: bool = False) -> dict:
        data = {
            **self.header_dict(),
            "token_offsets": [list(o) for o in self.token_offsets], "token_segments": self.token_segments,
            "words": [asdict(w) for w in self.words], "layers": self.layers,
            "targets": [t.to_dict() for t in self.targets],
            "aggregations": list(AGGREGATIONS), "scores": self.scores.tolist(),
            "completeness": [c.to_dict() for c in self.completeness],
            # one object, as always written; of the path's fields, those the method read
            "settings": {**self.settings.to_dict(self.read_fields), **self.windowing.to_dict()},
            **({} if self.method_settings is None else {"method_settings": self.method_settings.to_dict()}),
            "seconds": self.seconds,
            # a result made before it was recorded is written back as it was read: without it
            **({"computed_at": self.computed_at} if self.computed_at is not None else {}),
        }
        if include_hidden and self.hidden_states is not None:
            data["hidden_states"] = self.hidden_states.tolist()
            data.update(self._hidden_tokens())
        return data

    @property
    def read_fields(self) -> tuple[str, ...]:
        """The path's fields of the settings the method read (every one, for a result that did not record it)."""
        return PATH_FIELDS if self.method_settings is None else self.method_settings.reads

    def _hidden_tokens(self) -> dict:
        """Which tokens the layer outputs hold, for a file that keeps the outputs (none: every token)."""
        kept = self.hidden_states is not None and self.hidden_tokens is not None
        return {"hidden_tokens": self.hidden_tokens} if kept else {}

    @classmethod
    def from_dict(cls, data: dict) -> Attribution:
        settings, windowing = split_recorded_settings(data["settings"])
        return cls(
            **cls.header_fields(data),
            token_offsets=[tuple(o) for o in data["token_offsets"]], token_segments=data["token_segments"],
            words=[Word.from_dict(w) for w in data["words"]],
            layers=data["layers"], targets=[ExplainedTarget.from_dict(t, data["window"]) for t in data["targets"]],
            scores=np.asarray(data["scores"], dtype=np.float64),
            completeness=[Completeness(**{k: c[k] for k in ("layer", "target", "steps", "f_input", "f_baseline",
                                                             "attribution_sum")},
                                       window_sums=tuple(c.get("window_sums", ())),
                                       kind=c.get("kind", "completeness"), entering=c.get("entering"),
                                       absorbed=c.get("absorbed")) for c in data["completeness"]],
            settings=settings, windowing=windowing, seconds=data["seconds"],
            hidden_states=np.asarray(data["hidden_states"], dtype=np.float32) if "hidden_states" in data else None,
            hidden_tokens=data.get("hidden_tokens") if "hidden_states" in data else None,
            computed_at=data.get("computed_at"),
            method_settings=MethodSettings.from_dict(data["method_settings"]) if "method_settings" in data else None,
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
