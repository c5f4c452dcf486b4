"""How the pages name the View's choices: methods, rules, spans, foils and what a side-by-side view compares with
(a span or foil as its spec or the string form the widgets offer)."""
from __future__ import annotations

from rcqa.attribution.layerwise import LAYERWISE_METHODS, layerwise_method
from rcqa.attribution.targets import TARGETS
from rcqa.catalog import shown_name
from rcqa.lens.interventions import KNOCKOUT_BASELINES
from rcqa.text import without_bidi_controls
from rcqa.attribution.settings import FoilSpec, SpanSpec
from rcqa.ui.view.state import NAMED_FOILS, SPANS, VersusSpec

METHOD_NAMES = {name: method.label for name, method in LAYERWISE_METHODS.items()}  # the registry's, as offered
RULE_NAMES = {"gausslegendre": "Gauss–Legendre (Captum's default; adaptive)",
              "riemann_right": "right Riemann sum (the paper's text: 50 steps; fixed)",
              "paper_trapezoid": "the paper's released code: 20 points k/20, trapezoid (fixed)"}
KNOCKOUT_NAMES = KNOCKOUT_BASELINES  # what replaces a knocked-out word's states, as the choice names it


def target_label(name: str, method: str) -> str:
    """A target as the Target F choice names it, with what the method adds (AttnLRP: what enters its rules, where
    that is not F)."""
    return f"{name}: {TARGETS[name]}{layerwise_method(method).target_note(name)}"


def foil_label(foil: FoilSpec | str | None) -> str:
    """A foil in words, from its spec or the string form a choice offers."""
    if foil is None:
        return NAMED_FOILS[None]
    spec = FoilSpec.parse(foil)
    if spec.kind == "nbest":
        assert spec.rank is not None  # an nbest foil's rank
        return f"the n-best span #{spec.rank + 1}"
    if spec.kind == "text":
        return f"the text “{without_bidi_controls(spec.text or '')}”"  # a link's text, shown in a choice
    return NAMED_FOILS[spec.kind]


def span_label(span: SpanSpec | str) -> str:
    """A span in words, from its spec or the string form a choice offers."""
    spec = SpanSpec.parse(span)
    return f"the n-best span #{spec.rank + 1}" if spec.kind == "nbest" else SPANS[spec.kind]


def versus_label(versus: VersusSpec) -> str:
    if versus.model is not None:
        return f"the model {without_bidi_controls(shown_name(versus.model))}"
    if versus.foil is not None:
        return f"the contrast with {foil_label(versus.foil)}"
    return "the gold span"
