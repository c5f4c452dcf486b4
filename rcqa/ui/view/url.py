"""The View as a link and back: each URL parameter bounded to the values its field may take, parsed once here (a
span or foil into its spec), and each value a link may not hold refused in one sentence, the field keeping its
default."""
from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from typing import Any

from rcqa.analysis.projection import PROJECTIONS
from rcqa.analysis.similarity import VARIANTS
from rcqa.attribution.quadrature import RULES
from rcqa.attribution.layerwise import LAYERWISE_METHODS
from rcqa.attribution.settings import BASELINES, WINDOWS, FoilSpec, SpanSpec
from rcqa.catalog import offered, shown_name
from rcqa.figures.heads import HEAD_VIEWS
from rcqa.gallery import GALLERY, GALLERY_BY_ID
from rcqa.lens.interventions import KNOCKOUT_BASELINES
from rcqa.qa import MAX_QUESTION_CHARS
from rcqa.text import quoted
from rcqa.types import AGGREGATIONS
from rcqa.ui.ends import ENDS
from rcqa.ui.view.state import (DEFAULT_SETTINGS, MAX_TOP_K, NBEST_SPANS, PICKABLE_TARGETS, SOURCES, SPANS, TOLERANCES,
                                VersusSpec, View, default_model)

UNIT_GRANULARITIES = ("sentence", "phrase")  # the sentences tab's units (tokens and words have the heatmap)
PAIR_UNITS = ("word", *UNIT_GRANULARITIES)  # the units two layers are compared by on Compare layers
URL_PASSAGE_LIMIT = 1500  # characters of a pasted passage that still travel in a link
RUN_NAME = re.compile(r"[\w.-]{1,120}", re.ASCII)  # a run folder's name in a link
_SPAN_CHOICES = (*SPANS, *NBEST_SPANS)  # the spans a link may name: the n-best list's ranks only
MAX_STEPS = 512  # the most path points a link may ask for (the queue prices a job at its max_steps before it runs)
_SWITCH_VALUES = ("on", "off")

# URL parameter → (View field, allowed values, a (type, low, high) range, or the spec it is parsed into)
_URL_FIELDS: dict[str, tuple[str, Any]] = {
    "target": ("target", PICKABLE_TARGETS), "span": ("span", SpanSpec), "baseline": ("baseline", tuple(BASELINES)),
    "rule": ("rule", RULES), "steps": ("steps", (int, 1, MAX_STEPS)), "tol": ("tolerance", TOLERANCES),
    "agg": ("aggregation", AGGREGATIONS), "k": ("top_k", (int, 1, MAX_TOP_K)), "layer": ("layer", (int, 0, 100)),
    "jsd": ("variant", tuple(VARIANTS)), "first": ("first_layer", (int, -1, 100)),
    "second": ("second_layer", (int, -1, 100)), "map": ("projection", PROJECTIONS),
    "maplayer": ("projection_layer", (int, -1, 100)), "ko": ("knockout", tuple(KNOCKOUT_BASELINES)),
    "contrast": ("contrast", FoilSpec),
    "hscore": ("head_score", HEAD_VIEWS), "hlayer": ("head_layer", (int, 0, 100)), "head": ("head", (int, 0, 100)),
    "win": ("windows", tuple(WINDOWS)),
    "vs": ("versus", VersusSpec),
    "method": ("method", tuple(LAYERWISE_METHODS)),
    "ends": ("ends", tuple(ENDS)),
    "gran": ("granularity", UNIT_GRANULARITIES),
    "pairby": ("pair_units", PAIR_UNITS),
}

# URL parameter → a setting no widget shows (a run's or the API's), named only when it is not the default: first, so
# that steps are read against the max_steps the link gives. A link may lower the memory one batch takes, never raise
# it above the default (the server sizes its workers for that).
_URL_UNSHOWN: dict[str, tuple[str, Any]] = {
    "maxsteps": ("max_steps", (int, 1, MAX_STEPS)),
    "mem": ("memory_budget_mb", (int, 16, DEFAULT_SETTINGS.memory_budget_mb)),
    "null": ("allow_null", _SWITCH_VALUES),  # decode with "no answer" or not; absent: as the model's card says
}

# URL parameter → a View field that is on or off; the link names it only when it is not at its default (off, or for
# [CLS] and [SEP], None: as the target has it)
_URL_SWITCHES = {"qwords": "question_words", "special": "special_tokens"}


def passage_hash(passage: str) -> str:
    return hashlib.sha256(passage.encode()).hexdigest()[:12]


def to_query(view: View, target_chosen: bool = True) -> dict[str, str]:
    """The view as URL parameters. Long pasted passages go as a hash only (their text stays in the session). A
    target nobody chose stays out, so that the link's example gets its own default (answer_vs_null where the model
    abstains)."""
    query = {"src": view.source}
    if view.model != default_model():
        query["model"] = shown_name(view.model)  # in public mode a folder's name, never its path
    if view.source == "paste":
        key = "passage" if len(view.passage) <= URL_PASSAGE_LIMIT else "ph"
        query[key] = view.passage if key == "passage" else passage_hash(view.passage)
    else:
        query["ex"] = view.example_id
    if view.source == "upload" and view.run:
        query["run"] = view.run
    gallery = GALLERY_BY_ID.get(view.example_id)
    if view.source != "gallery" or gallery is None or view.question != gallery.question:
        query["q"] = view.question
    for name, (attribute, _) in _URL_UNSHOWN.items():
        if (value := getattr(view.explain, attribute)) != getattr(DEFAULT_SETTINGS, attribute):
            query[name] = ("on" if value else "off") if isinstance(value, bool) else str(value)
    for name, (attribute, _) in _URL_FIELDS.items():
        if name == "target" and not target_chosen:
            continue
        value = getattr(view, attribute)  # a spec's str is its string form
        query[name] = "off" if value is None else shown_versus(value) if isinstance(value, VersusSpec) else str(value)
    query.update({name: "on" if value else "off" for name, attribute in _URL_SWITCHES.items()
                  if (value := getattr(view, attribute)) != View.__dataclass_fields__[attribute].default})
    return query


def from_query(query: Mapping[str, str]) -> tuple[View, list[str]]:
    """A view from URL parameters, and what in them could not be used (those fall back to defaults)."""
    view, problems = View(), []
    if query.get("model") and (found := offered(query["model"])):
        view.model = found
    elif query.get("model"):  # a link never loads an arbitrary model: a visitor's click on the Model page does
        problems.append("This link names a model this server does not offer, so the default model is shown. "
                        "A model of your own is loaded on the Model page.")
    if query.get("src") in SOURCES:
        view.source = query["src"]
    if view.source == "paste":
        view.passage = query.get("passage", "")
        if not view.passage and query.get("ph"):
            problems.append("This link's pasted passage was too long to travel in a link; it is kept only in the "
                            "session that pasted it. Paste it again.")
    elif query.get("ex"):
        view.example_id = query["ex"]
        if view.source == "gallery" and view.example_id not in GALLERY_BY_ID:
            problems.append(f"The link names a gallery example {quoted(view.example_id)} that does not exist; "
                            "showing the first one.")
            view.example_id = GALLERY[0].id
        if view.source == "upload" and RUN_NAME.fullmatch(query.get("run", "")):
            view.run = query["run"]  # a run this server may not have: Explore then says so
        elif view.source == "upload":
            problems.append("This link points into an uploaded file, which is kept only in the session that "
                            "uploaded it. Upload the file again to see this question.")
    gallery = GALLERY_BY_ID.get(view.example_id)
    view.question = query.get("q", gallery.question if view.source == "gallery" and gallery else "")
    if len(view.question) > MAX_QUESTION_CHARS:  # bounded as in the box: never kept, nor written back to the link
        problems.append(f"Ignored the link's question of {len(view.question):,} characters: a question holds at most "
                        f"{MAX_QUESTION_CHARS:,}.")
        view.question = gallery.question if view.source == "gallery" and gallery else ""
    fields = {**_URL_UNSHOWN, **_URL_FIELDS,
              **{name: (attribute, _SWITCH_VALUES) for name, attribute in _URL_SWITCHES.items()}}
    for name, (attribute, allowed) in fields.items():
        if name in query:
            try:  # a value the settings refuse beside the others (steps over max_steps) is refused as a bad one
                value = _parse(query[name], allowed)
                setattr(view, attribute, value == "on" if allowed is _SWITCH_VALUES else value)
            except ValueError as error:
                problems.append(f"Ignored {name}={quoted(query[name])} from the link: {error}.")
    return view, problems


def _parse(text: str, allowed: Any) -> Any:
    if isinstance(allowed, tuple) and allowed and allowed[0] is int:
        _, low, high = allowed
        if not (re.fullmatch(r"-?[0-9]{1,6}", text) and low <= int(text) <= high):  # int's errors quote the text
            raise ValueError(f"must be a whole number from {low} to {high}")
        return int(text)
    if allowed is SpanSpec:
        return SpanSpec.parse(_parse(text, _SPAN_CHOICES))
    if allowed is FoilSpec:
        return None if text == "off" else FoilSpec.parse(text)  # its ValueError: what a foil may be
    if allowed is VersusSpec:
        return None if text == "off" else parse_versus(text)
    if allowed is TOLERANCES:
        try:
            value = None if text == "off" else float(text)
        except ValueError:  # float's own message would quote the whole text
            value = math.nan
        if value not in TOLERANCES:
            raise ValueError(f"choose one of {', '.join('off' if t is None else str(t) for t in TOLERANCES)}")
        return value
    if text not in allowed:
        raise ValueError(f"choose one of {', '.join(allowed)}")
    return text


def parse_versus(text: str) -> VersusSpec:
    """A link's versus (VersusSpec.parse), another model only where this server offers it, under the name the
    catalog gives it; ValueError, in one sentence, otherwise."""
    versus = VersusSpec.parse(text)
    if versus.model is None:
        return versus
    if found := offered(versus.model):
        return VersusSpec("model", model=found)
    raise ValueError("compare with gold, model:NAME (a model this server offers) or foil:FOIL")


def shown_versus(versus: VersusSpec) -> str:
    """versus as a link writes it: another model by the name public mode shows, never its path."""
    return versus.to_string() if versus.model is None else f"model:{shown_name(versus.model)}"
