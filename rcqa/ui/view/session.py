"""The session's View: read from the URL on a session's first run, kept in st.session_state, mirrored back to
st.query_params, and changed by widgets (bind) and the pages' buttons, so that a link reproduces what its sender
saw and values survive page switches, where Streamlit would drop the state of widgets that are not drawn."""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import streamlit as st

from rcqa.attribution.settings import PRESETS, ExplainSettings, FoilSpec, SpanSpec
from rcqa.spans import N_BEST
from rcqa.types import Answer
from rcqa.ui.errors import callback, log_failure, plain
from rcqa.ui.view.state import ABSTENTION_TARGET, DEFAULT_SETTINGS, View, default_target
from rcqa.ui.view.url import from_query, to_query

_VIEW, _URL_PROBLEMS = "rcqa.view", "rcqa.url_problems"
_TARGET_CHOSEN = "rcqa.target_chosen"  # a target picked by the user or a link, which fit_target leaves alone


def view() -> View:
    """The session's view: read from the URL on the session's first run, then kept in the session."""
    if _VIEW not in st.session_state:
        query = st.query_params.to_dict()
        st.session_state[_VIEW], st.session_state[_URL_PROBLEMS] = read_link(query)
        st.session_state[_TARGET_CHOSEN] = "target" in query
    return st.session_state[_VIEW]


def read_link(query: dict[str, str]) -> tuple[View, list[str]]:
    """from_query, which never shows Streamlit's error page: the pages read the view as they load, before their
    guard (show.guarded) runs, so a link it fails on gives the default view and one sentence."""
    try:
        return from_query(query)
    except Exception as error:  # the link's last line of defence, as show.guarded is the page's
        log_failure(error, "Reading the page's link")
        return View(), ["This link could not be read, so the default view is shown."]


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
         options: list | None = None, spec: type[SpanSpec] | type[FoilSpec] | None = None, unset: Any = None,
         **kwargs: Any) -> Any:
    """Draw a widget whose value is the view's field `name`; a change writes it back (then calls `then`). A field
    held as a spec is offered in its string form and the widget's choice parsed once, on its way back. A field that
    is None shows `unset` where given (a default that depends on what is shown, until the widget is changed)."""
    key = f"rcqa.widget.{name}"
    value = getattr(view(), name)
    if value is None and unset is not None:
        value = unset
    if spec is not None and value is not None:
        value = value.to_string()
    if options is not None:
        kwargs["options"] = options
        value = value if value in options else None
    st.session_state[key] = value

    def write_back() -> None:
        chosen = st.session_state[key]
        setattr(view(), name, spec.parse(chosen) if spec is not None and chosen is not None else chosen)
        if then:
            then(view())

    return widget(label, key=key, on_change=callback(write_back), **kwargs)


def apply_preset(name: str) -> None:
    """A preset's settings; its target is pinned (in the link too) unless it is the default one, which leaves an
    abstention to be explained by answer_vs_null."""
    view().apply(PRESETS[name])
    st.session_state[_TARGET_CHOSEN] = PRESETS[name].settings.targets[0] != DEFAULT_SETTINGS.targets[0]


def target_chosen(current: View | None = None) -> None:
    """The target was picked (a widget's callback): fit_target no longer changes it."""
    st.session_state[_TARGET_CHOSEN] = True


def fit_target(answer: Answer) -> None:
    """While no target was picked, the default one: answer_vs_null when the model abstains, else the method's own
    (span_log_prob for IG, span_logits for AttnLRP), so that switching the method switches it too."""
    if not st.session_state.get(_TARGET_CHOSEN):
        current = view()
        current.target = ABSTENTION_TARGET if answer.abstained else default_target(current.method)


def settings_under(method: str, answer: Answer) -> ExplainSettings:
    """The settings this view would explain with under another method: a target not picked follows the method, as
    fit_target makes it follow."""
    other = copy.copy(view())
    other.method = method
    if not st.session_state.get(_TARGET_CHOSEN):
        other.target = ABSTENTION_TARGET if answer.abstained else default_target(method)
    return other.settings()


def example_changed(current: View) -> None:
    """After the source or example changed: the settings that belong to an example go back to their defaults (a
    foil, an n-best span, the whole passage, a chosen target, a side-by-side foil), so that nothing of the last one
    applies unseen. Another model, the gold span and start and end apart, which read any example alike, stay."""
    current.contrast, current.windows = None, "answer"
    if current.versus and current.versus.kind == "foil":
        current.versus = None
    if current.span.kind == "nbest":
        current.span = SpanSpec("predicted")
    current.target = DEFAULT_SETTINGS.targets[0]
    st.session_state[_TARGET_CHOSEN] = False


def why_not(rank: int, abstained: bool) -> None:
    """Explain why the model gave its answer rather than its rank-th best span (the contrast against it), or, when it
    abstained, why it gave "no answer" rather than that span (0: the best): its default target, left unpinned."""
    if abstained:
        update(span=SpanSpec("nbest", rank), target=ABSTENTION_TARGET, contrast=None)
    else:
        update(span=SpanSpec("predicted"), contrast=FoilSpec("nbest", rank=rank))


def why_not_rank(current: View, abstained: bool) -> int | None:
    """The n-best rank "why not this span?" asks about in this view, if any (what the box shows)."""
    chosen = current.span if abstained else current.contrast
    if chosen is None or chosen.kind != "nbest" or chosen.rank is None:
        return None
    return chosen.rank if chosen.rank < N_BEST else None


def fit_head(layers: int, heads: int) -> None:
    """Make the chosen head one of a model with `layers` × `heads` heads (a link's, or a deeper model's, becomes the
    last)."""
    current = view()
    current.head_layer, current.head = min(current.head_layer, layers - 1), min(current.head, heads - 1)


def fit_windows(answer: Answer) -> None:
    """A passage of one window has no whole passage apart from it: the view says "answer", as the result does."""
    if answer.n_windows < 2:
        view().windows = "answer"


def foil_typed(text: str) -> None:
    """A foil typed as text: the contrast with that text (nothing typed: no contrast)."""
    update(contrast=FoilSpec("text", text=text) if text.strip() else None)


def fit_layers(count: int) -> None:
    """Make the chosen layers layers of a result with `count` of them: -1 becomes the last, and a layer from a
    link or from a deeper model becomes the last too."""
    current = view()
    for name in ("layer", "first_layer", "second_layer", "projection_layer"):
        chosen = getattr(current, name)
        setattr(current, name, count - 1 if chosen < 0 else min(chosen, count - 1))
