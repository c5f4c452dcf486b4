"""What the pages show, as one View: kept in st.session_state and mirrored to st.query_params, so a link
reproduces what its sender saw. Widgets write to the view through callbacks (bind), which keeps values across page
switches, where Streamlit would drop the state of widgets that are not drawn. Bad settings in a link fall back to
defaults, each with one sentence saying so."""
from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from rcqa.analysis.projection import METHODS
from rcqa.analysis.similarity import VARIANTS
from rcqa.attribution.quadrature import PAPER_STEPS, RULES
from rcqa.attribution.settings import BASELINES, PRESETS, WINDOWS, FoilSpec, IGSettings, resolve
from rcqa.attribution.settings import METHODS as EXPLAIN_METHODS  # projection METHODS (t-SNE, PCA) are imported too
from rcqa.attribution.targets import TARGETS
from rcqa.catalog import offered, shown_name
from rcqa.gallery import GALLERY, GALLERY_BY_ID
from rcqa.lens.interventions import KNOCKOUT_BASELINES
from rcqa.model import DEFAULT_MODEL
from rcqa.spans import N_BEST
from rcqa.text import quoted, without_bidi_controls
from rcqa.types import AGGREGATIONS, Answer
from rcqa.ui.errors import callback, plain
from rcqa.ui.ends import ENDS, ends_of, explained_targets

MODEL_ENV = "RCQA_MODEL"  # the app's default model: a folder or hub id (else the embedded model)
URL_PASSAGE_LIMIT = 1500  # characters of a pasted passage that still travel in a link
SOURCES = {"gallery": "Gallery", "upload": "Upload a SQuAD / DuoRC file", "paste": "Paste a passage"}
SPANS = {"predicted": "the model's predicted answer (the paper)", "gold": "the gold answer"}
NBEST_SPANS = tuple(f"nbest:{rank}" for rank in range(N_BEST))  # "why not this span?": the K-th best span
ABSTENTION_TARGET = "answer_vs_null"  # what an abstention is explained by unless a target was chosen
PICKABLE_TARGETS = tuple(name for name in TARGETS if name != "contrast")  # a contrast is asked for by its foil
NAMED_FOILS = {None: "no contrast: explain the span alone", "runner-up": "the best span clear of the answer",
               "gold": "the gold answer", "null": '"no answer"',
               "distractor-number": "the best-scoring other number (quantifier questions)"}
TOLERANCES = (None, 0.001, 0.005, 0.01, 0.05)
MAX_TOP_K = 20
RUN_NAME = re.compile(r"[\w.-]{1,120}", re.ASCII)  # a run folder's name in a link
_VIEW, _URL_PROBLEMS = "rcqa.view", "rcqa.url_problems"
_TARGET_CHOSEN = "rcqa.target_chosen"  # a target picked by the user or a link, which fit_target leaves alone


def default_model() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_MODEL


_DEFAULT = resolve("default")  # a new view's IG settings: the default preset's, typed in one place


@dataclass
class View:
    """Everything that decides what the pages show; one link holds all of it (except long pasted text)."""

    model: str = field(default_factory=default_model)
    source: str = "gallery"
    example_id: str = GALLERY[0].id  # a gallery id, or an id in the uploaded file
    passage: str = ""  # a pasted passage
    question: str = GALLERY[0].question
    target: str = _DEFAULT.targets[0]
    span: str = _DEFAULT.span
    baseline: str = _DEFAULT.baseline
    rule: str = _DEFAULT.rule
    steps: int = _DEFAULT.steps
    tolerance: float | None = _DEFAULT.tolerance
    aggregation: str = PRESETS["default"].aggregation
    top_k: int = 5
    layer: int = 0  # of the top-k passage view
    variant: str = "full"
    first_layer: int = 0  # the pair of layers compared side by side; -1 is the last layer
    second_layer: int = -1
    projection: str = "tsne"
    projection_layer: int = -1
    knockout: str = "pad"  # what replaces knocked-out words' states (rcqa.lens.interventions)
    contrast: str | None = _DEFAULT.contrast  # a FOIL: explain why the span and not it (rcqa.attribution.contrast)
    windows: str = _DEFAULT.windows  # "all": the whole passage in one explanation (offered when it has several windows)
    versus: str | None = None  # side by side: "gold", "model:NAME" or "foil:FOIL" (parse_versus)
    method: str = _DEFAULT.method  # or "attnlrp" (one window: the whole passage is IG's)
    ends: str = "joined"  # "apart": the start and end logits too, in the same job (rcqa.ui.start_end)
    run: str = ""  # the dataset run whose questions source "upload" offers (rcqa.ui.runs), by its folder's name

    def settings(self) -> IGSettings:
        """The engine's settings (ValueError if they are invalid)."""
        chosen = {"targets": explained_targets(self.target, self.ends, self.contrast),
                  **{name: getattr(self, name) for name in _SETTINGS}}
        if self.method == "attnlrp":
            chosen["windows"] = "answer"
        return resolve("default", **chosen)


# the IGSettings fields a View holds beside its target
_SETTINGS = ("span", "baseline", "rule", "steps", "tolerance", "contrast", "windows", "method")


def view_fields(settings: IGSettings) -> dict[str, Any]:
    """The View fields that hold these settings: View.settings read backwards (a view explains one target, with
    the start and end logits apart or not, the default max_steps and memory budget)."""
    data = settings.to_dict()
    return {"target": data["targets"][0], "ends": ends_of(data["targets"]),
            **{name: getattr(settings, name) for name in _SETTINGS}}


# URL parameter → (View field, allowed values or a (type, low, high) range)
_URL_FIELDS: dict[str, tuple[str, Any]] = {
    "target": ("target", PICKABLE_TARGETS), "span": ("span", (*SPANS, *NBEST_SPANS)), "baseline": ("baseline", tuple(BASELINES)),
    "rule": ("rule", RULES), "steps": ("steps", (int, 1, 128)), "tol": ("tolerance", TOLERANCES),
    "agg": ("aggregation", AGGREGATIONS), "k": ("top_k", (int, 1, MAX_TOP_K)), "layer": ("layer", (int, 0, 100)),
    "jsd": ("variant", tuple(VARIANTS)), "first": ("first_layer", (int, -1, 100)),
    "second": ("second_layer", (int, -1, 100)), "map": ("projection", METHODS),
    "maplayer": ("projection_layer", (int, -1, 100)), "ko": ("knockout", tuple(KNOCKOUT_BASELINES)),
    "contrast": ("contrast", FoilSpec),
    "win": ("windows", tuple(WINDOWS)),
    "vs": ("versus", "versus"),
    "method": ("method", tuple(EXPLAIN_METHODS)),
    "ends": ("ends", tuple(ENDS)),
}
METHOD_NAMES = {"integrated_gradients": "Integrated Gradients (exact)", "attnlrp": "AttnLRP (one pass)"}
RULE_NAMES = {"gausslegendre": "Gauss–Legendre (Captum's default; adaptive)",
              "riemann_right": "right Riemann sum (the paper's text: 50 steps; fixed)",
              "paper_trapezoid": "the paper's released code: 20 points k/20, trapezoid (fixed)"}
# a preset sets IG's settings, not what is attributed: the windows explained, the method and the ends stay as chosen
PRESET_VIEWS = {name: {**{k: v for k, v in view_fields(p.settings).items() if k not in ("windows", "method", "ends")},
                       "aggregation": p.aggregation} for name, p in PRESETS.items()}


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
    for name, (attribute, _) in _URL_FIELDS.items():
        if name == "target" and not target_chosen:
            continue
        value = getattr(view, attribute)
        query[name] = "off" if value is None else shown_versus(value) if attribute == "versus" else str(value)
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
    for name, (attribute, allowed) in _URL_FIELDS.items():
        if name in query:
            try:
                setattr(view, attribute, _parse(query[name], allowed))
            except ValueError as error:
                problems.append(f"Ignored {name}={quoted(query[name])} from the link: {error}.")
    return view, problems


def _parse(text: str, allowed: Any) -> Any:
    if isinstance(allowed, tuple) and allowed and allowed[0] is int:
        _, low, high = allowed
        if not (re.fullmatch(r"-?[0-9]{1,6}", text) and low <= int(text) <= high):  # int's errors quote the text
            raise ValueError(f"must be a whole number from {low} to {high}")
        return int(text)
    if allowed is FoilSpec:
        return None if text == "off" else FoilSpec.parse(text).to_string()  # its ValueError: what a foil may be
    if allowed == "versus":
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


VERSUS_KINDS = {"gold": "the gold span", "model": "another model", "foil": "another foil"}


def parse_versus(text: str) -> str:
    """What the side-by-side view sets against the current explanation: "gold" (the gold span explained), "model:NAME"
    (a model this server offers, on the same question) or "foil:FOIL" (the contrast with another foil); ValueError,
    in one sentence, otherwise."""
    kind, _, value = text.partition(":")
    if text == "gold":
        return text
    if kind == "model" and (found := offered(value)):
        return f"model:{found}"
    if kind == "foil":
        return f"foil:{FoilSpec.parse(value).to_string()}"  # its ValueError says what a foil may be
    raise ValueError("compare with gold, model:NAME (a model this server offers) or foil:FOIL")


def shown_versus(versus: str) -> str:
    """versus as a link writes it: another model by the name public mode shows, never its path."""
    kind, _, value = versus.partition(":")
    return f"model:{shown_name(value)}" if kind == "model" else versus


def versus_settings(settings: IGSettings, versus: str) -> IGSettings:
    """The second explanation's settings: the gold span, or the contrast with another foil; another model keeps them."""
    kind, _, value = versus.partition(":")
    if kind == "gold":
        return dataclasses.replace(settings, span="gold")
    if kind == "foil":
        return dataclasses.replace(settings, contrast=value)
    return settings


def versus_label(versus: str) -> str:
    kind, _, value = versus.partition(":")
    if kind == "gold":
        return "the gold span"
    if kind == "model":
        return f"the model {without_bidi_controls(shown_name(value))}"
    return f"the contrast with {foil_label(value)}"


def view() -> View:
    """The session's view: read from the URL on the session's first run, then kept in the session."""
    if _VIEW not in st.session_state:
        query = st.query_params.to_dict()
        st.session_state[_VIEW], st.session_state[_URL_PROBLEMS] = from_query(query)
        st.session_state[_TARGET_CHOSEN] = "target" in query
    return st.session_state[_VIEW]


def publish() -> None:
    """Mirror the view to the URL (call once the page has drawn its widgets, so their callbacks have run)."""
    wanted = to_query(view(), st.session_state.get(_TARGET_CHOSEN, False))
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


def show_url_problems() -> None:
    for problem in st.session_state.pop(_URL_PROBLEMS, []):
        st.warning(plain(problem))  # problems quote the link's values


def update(**changes: Any) -> None:
    """Change view fields (for callbacks such as 'use the paper's settings')."""
    current = view()
    for name, value in changes.items():
        setattr(current, name, value)


def bind(widget: Callable[..., Any], name: str, label: str, then: Callable[[View], None] | None = None,
         options: list | None = None, **kwargs: Any) -> Any:
    """Draw a widget whose value is the view's field `name`; a change writes it back (then calls `then`)."""
    key = f"rcqa.widget.{name}"
    value = getattr(view(), name)
    if options is not None:
        kwargs["options"] = options
        value = value if value in options else None
    st.session_state[key] = value

    def write_back() -> None:
        setattr(view(), name, st.session_state[key])
        if then:
            then(view())

    return widget(label, key=key, on_change=callback(write_back), **kwargs)


def apply_preset(name: str) -> None:
    """A preset's settings; its target is pinned (in the link too) unless it is the default one, which leaves an
    abstention to be explained by answer_vs_null."""
    update(**PRESET_VIEWS[name])
    st.session_state[_TARGET_CHOSEN] = PRESET_VIEWS[name]["target"] != _DEFAULT.targets[0]


def target_chosen(current: View | None = None) -> None:
    """The target was picked (a widget's callback): fit_target no longer changes it."""
    st.session_state[_TARGET_CHOSEN] = True


def fit_target(answer: Answer) -> None:
    """Explain an abstention by default: while no target was picked, the default target becomes answer_vs_null
    when the model abstains, and goes back to the default when it answers."""
    current = view()
    if st.session_state.get(_TARGET_CHOSEN):
        return
    default = _DEFAULT.targets[0]
    if answer.abstained and current.target == default:
        current.target = ABSTENTION_TARGET
    elif not answer.abstained and current.target == ABSTENTION_TARGET:
        current.target = default


def example_changed(current: View) -> None:
    """After the source or example changed: the settings that belong to an example go back to their defaults (a
    foil, an n-best span, the whole passage, a chosen target, a side-by-side foil), so that nothing of the last one
    applies unseen. Another model, the gold span and start and end apart, which read any example alike, stay."""
    current.contrast, current.windows = None, "answer"
    if current.versus and current.versus.startswith("foil:"):
        current.versus = None
    if current.span in NBEST_SPANS:
        current.span = "predicted"
    current.target = _DEFAULT.targets[0]
    st.session_state[_TARGET_CHOSEN] = False


def why_not(rank: int, abstained: bool) -> None:
    """Explain why the model gave its answer rather than its rank-th best span (the contrast against it), or, when it
    abstained, why it gave "no answer" rather than that span (0: the best): its default target, left unpinned."""
    if abstained:
        update(span=NBEST_SPANS[rank], target=ABSTENTION_TARGET, contrast=None)
    else:
        update(span="predicted", contrast=NBEST_SPANS[rank])


def why_not_rank(current: View, abstained: bool) -> int | None:
    """The n-best rank "why not this span?" asks about in this view, if any (what the box shows)."""
    chosen = current.span if abstained else current.contrast
    return NBEST_SPANS.index(chosen) if chosen in NBEST_SPANS else None


def fit_windows(answer: Answer) -> None:
    """A passage of one window has no whole passage apart from it: the view says "answer", as the result does."""
    if answer.n_windows < 2:
        view().windows = "answer"


def foil_label(foil: str | None) -> str:
    if foil in NAMED_FOILS:
        return NAMED_FOILS[foil]
    if foil.startswith("nbest:"):
        return f"the n-best span #{int(foil.split(':')[1]) + 1}"
    return f"the text “{without_bidi_controls(foil.removeprefix('text:'))}”"  # a link's text, shown in a choice


def foil_typed(text: str) -> None:
    """A foil typed as text: the contrast with that text (nothing typed: no contrast)."""
    update(contrast=f"text:{text}" if text.strip() else None)


def span_label(span: str) -> str:
    if span in SPANS:
        return SPANS[span]
    return f"the n-best span #{int(span.split(':')[1]) + 1}"


def steps_of_rule(current: View) -> None:
    """After the rule changed: show the 20 points the paper's fixed rule always takes."""
    if current.rule == "paper_trapezoid":
        current.steps = PAPER_STEPS


def fit_layers(count: int) -> None:
    """Make the chosen layers layers of a result with `count` of them: -1 becomes the last, and a layer from a
    link or from a deeper model becomes the last too."""
    current = view()
    for name in ("layer", "first_layer", "second_layer", "projection_layer"):
        chosen = getattr(current, name)
        setattr(current, name, count - 1 if chosen < 0 else min(chosen, count - 1))
