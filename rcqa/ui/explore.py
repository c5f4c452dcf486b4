"""What the Explore page works out from the view, the answer and the result: the choices it offers and the
sentences it writes (the page itself only lays them out)."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from rcqa import figures
from rcqa.analysis.roles.categories import boundary_contrast
from rcqa.attribution.layerwise import LAYERWISE_METHODS, layerwise_method
from rcqa.attribution.settings import FoilSpec
from rcqa.attribution.window import same_span
from rcqa.evaluate import score
from rcqa.lens.contrast import margin_reading
from rcqa.text import shortened, without_bidi_controls
from rcqa.model import QAModel
from rcqa.types import NULL_TARGETS, Answer, Attribution, Example, ExplainSettings, Span
from rcqa.ui.ends import ends_of
from rcqa.ui.errors import plain
from rcqa.ui.results.per_layer import KNOCKOUT_DRAWS
from rcqa.ui.view import NAMED_FOILS, SPANS, VersusSpec, View, foil_label, target_label

if TYPE_CHECKING:
    import numpy as np

PRESET_LABELS = {"default": "Use rcqa's defaults", "paper-code": "Use the paper's code settings",
                 "paper-text": "Use the paper's text settings"}
HELP = {  # the longer help texts of the page's widgets
    "method": " ".join(f"{method.label}: {method.description}." for method in LAYERWISE_METHODS.values())
              + " Docs: AttnLRP.",
    "tolerance": "Gauss–Legendre only: the path is cut into panels of steps/2 points, each checked for completeness; "
                 "the worst panel is refined, first by Kronrod's extension of its rule (its gradients are kept), then "
                 "by halving, until the layer's error is under the tolerance (at most 128 gradients a layer). The "
                 "paper's rules always run exactly as set.",
    "why_not_null": "Explains log p(span) − log p(no answer) at that span: what made the model prefer no answer to it.",
    "why_not": "Explains log p(answer) − log p(span): what separates the answer from that span (a span that overlaps "
               "the answer is a boundary contrast: where its start and end were decided).",
    "contrast": "Explains log p(span) − log p(foil), the two spans' start + end logits apart: what separates them. A "
                "foil in another window of the passage is a constant there (that window is not explained).",
}


def method_refusal(qa_model: QAModel, method: str) -> str | None:
    """Why the chosen method cannot explain this model (its class names the families it explains), or None."""
    return layerwise_method(method).model_refusal(qa_model)


def method_caption(method: str) -> str:
    """The line under the page's title: the method the explanations below are made with."""
    return layerwise_method(method).caption


def explained_target(current: View) -> str:
    """What the chosen method explains, in one sentence beside its choice: methods explain the same target, but
    AttnLRP's rules receive something else for a log-probability, which a reader comparing methods must know."""
    return f"{_method_name(current.method)} explains {target_label(current.target, current.method)}."


def _method_name(method: str) -> str:
    """A method as a sentence names it: its label without the note in brackets ("AttnLRP (one pass)": AttnLRP)."""
    return layerwise_method(method).short_label


def earlier_method_note(earlier: Attribution, settings: ExplainSettings) -> str:
    """Why the heatmap below is another method's: the chosen one has not explained this example yet."""
    shown, chosen = _method_name(earlier.settings.method), _method_name(settings.method)
    return (f"Below is {shown}'s explanation, made before; {chosen}'s is one click away (Explain every layer, "
            "above).")


def example_label(example: Example) -> str:
    label = f"{example.title} — {example.question}" if example.title else example.question
    return without_bidi_controls(label)  # an uploaded file's titles and questions


def window_labels(answer: Answer) -> dict[str, str]:
    """The windows an explanation may read, named for this answer's passage (of more than one window)."""
    home = answer.best.window + 1 if answer.best else 1
    return {"answer": f"the answer's window (window {home} of {answer.n_windows})",
            "all": f"the whole passage ({answer.n_windows} windows: about {answer.n_windows}× the time)"}


def span_choices(current: View) -> list[str]:
    """The spans offered, as strings: the named ones, and the view's own n-best span (from a link or why-not)."""
    span = str(current.span)
    return [*SPANS, *([span] if span not in SPANS else [])]


def foil_choices(current: View) -> list[str | None]:
    """The foils offered, as strings: the named ones (None: no contrast), and the view's own (an n-best span, a
    text)."""
    foil = None if current.contrast is None else str(current.contrast)
    return [*NAMED_FOILS, *([foil] if foil not in NAMED_FOILS else [])]


def typed_foil(current: View) -> str:
    """The text of the view's foil where it was typed (a text: foil), else nothing."""
    foil = current.contrast
    if foil is None or foil.kind != "text":
        return ""
    assert foil.text is not None  # FoilSpec.parse gives a text foil its text
    return foil.text


def why_not_choices(answer: Answer) -> dict[int, str]:
    """The n-best list by rank, as "why not this span?" offers it: never the explained span itself. Where the model
    answered, that is its answer (the contrast's other side), and every span over the same characters; where it
    abstained, "no answer" is explained against each span, so every span is offered."""
    best = answer.best

    def offered(span: Span) -> bool:
        return answer.abstained or best is None or (span.start_char, span.end_char) != (best.start_char, best.end_char)

    return {rank: without_bidi_controls(f"#{rank + 1}: {span.text}") for rank, span in enumerate(answer.nbest)
            if offered(span)}


def explained(settings: ExplainSettings, answer: Answer) -> str:
    """What an explanation with these settings explains, in words (escaped: a foil may be a link's text)."""
    said = ("why the model said no answer (" + settings.targets[0] + ")"
            if answer.abstained and settings.targets[0] in NULL_TARGETS else "the answer")
    if settings.contrast:
        said = f"why the answer and not {plain(foil_label(settings.contrast))}"
    if settings.windows == "all":
        said += f" over all {answer.n_windows} windows of the passage"
    if ends_of(settings.targets) == "apart":
        said += ", and its start and end logits apart"
    return said


def contrast_readings(result: Attribution) -> list[str]:
    """For a contrast: its foil, where it lies, and whether it is a boundary contrast, in sentences (escaped);
    nothing without a contrast."""
    foil = result.targets[0].foil
    if foil is None:
        return []
    if foil.window == result.targets[0].window:
        where = "in the explained window"
    elif result.whole_passage:
        where = f"in window {foil.window + 1}, the answer in window {result.window + 1}: both are explained"
    else:
        where = (f"in window {foil.window + 1}, not the explained window {result.window + 1}: its logits are a "
                 "constant there, so the scores show the answer's side only")
    probability = "" if foil.probability is None else f", p = {foil.probability:.2g}"
    readings = [plain(f"Contrast: log p(answer) − log p(foil), foil “{foil.text or 'no answer'}” "
                      f"({where}{probability}).")]
    if boundary_contrast(result):
        readings.append(plain("The foil overlaps the answer: a boundary contrast, where the span's start and end "
                              "were decided. In the layer roles, the words of both spans are “shared”, apart from "
                              "“answer only” and “foil only”."))
    return readings


def margin_sentence(result: Attribution, margins: np.ndarray) -> str:
    """Where, on the lens, the answer first beats the contrast's foil, read from its margin per layer."""
    return margin_reading(result.layers, margins)


def word_choices(result: Attribution) -> list[str]:
    """The Words tab's passage words as its box offers them (an uploaded passage's bidi controls dropped)."""
    return [without_bidi_controls(choice) for choice in figures.word_choices(result)]


def first_versus(example: Example, answer: Answer) -> str:
    """What Side by side compares with on a first visit: the gold span where the model missed it, else the
    runner-up foil (the gold span would be A's own explanation again, and nothing would be drawn)."""
    missed = bool(example.answers) and score(answer.text, [gold.text for gold in example.answers])[0] == 0
    return "gold" if missed else "foil"


def side_by_side_offers(current: View, example: Example, answer: Answer) -> dict[VersusSpec, str]:
    """The side-by-side views offered against this explanation (versus → label): the gold span's where the model
    missed it, another foil's and another model's."""
    other = "default-squad2" if current.model != "default-squad2" else "default"
    offers = {VersusSpec("foil", foil=FoilSpec("runner-up")): "…another foil",
              VersusSpec("model", model=other): "…another model"}
    if example.answers and score(answer.text, [gold.text for gold in example.answers])[0] == 0:
        offers = {VersusSpec("gold"): "…the gold span", **offers}
    return offers


def repeated_versus(qa_model: QAModel, other_model: QAModel, example: Example, answer: Answer, settings: ExplainSettings,
                    other: ExplainSettings) -> str | None:
    """The one sentence saying that B (`other` on `other_model`) would be A's explanation again, found before any
    job is queued: the same model, the same settings and the same span's tokens (the gold span, where the model's
    answer is it, or the same foil). None where B differs from A."""
    if other_model.fingerprint != qa_model.fingerprint or dataclasses.replace(other, span=settings.span) != settings:
        return None
    if not same_span(qa_model, example, answer, settings.span, other.span):
        return None
    what = (f"the gold span “{plain(example.answers[0].text)}” is the span A explains"
            if other.span != settings.span else "B asks what A asks")
    return (f"A and B would be the same explanation ({what}, with the same model and settings), so nothing is "
            "computed: compare with another model or another foil.")


def search_summary(file_name: str, questions: int, matched: int, listed: int) -> str:
    """How many of an uploaded file's questions a search matched, and how many of them are listed."""
    return (f"{matched:,} of {questions:,} questions in {file_name} match"
            + (f"; the first {listed:,} are listed" if matched > listed else ""))


def knockouts_explained(top_k: int) -> str:
    return (f"At every layer, replaces the states of its top-{top_k} words, of {top_k} random passage words "
            f"({KNOCKOUT_DRAWS} draws) and of its bottom-{top_k} words, all outside the explained span, and skips each "
            "block, then runs the layers above: a few forward passes.")


def incomplete_warning(result: Attribution) -> str | None:
    """What to do about the layers whose attributions do not add up (completeness), if any."""
    if not (incomplete := figures.incomplete_layers(result)):
        return None
    remedy = layerwise_method(result.settings.method).completeness_remedy
    return (f"At {', '.join(incomplete)} the attributions do not add up to F(input) − F(baseline) (relative error "
            f"above {figures.COMPLETENESS_WARNING:.0%}): {remedy} before reading those layers. See the Completeness "
            "tab.")


def evidence_label(unit: int, holds_answer: bool, share_pct: float, text: str) -> str:
    """A button's label for a unit to jump to: its number (▶ where it holds the explained span), its share of the
    layer and its first words."""
    return f"#{unit}{' ▶' if holds_answer else ''} · {abs(share_pct):.0f}% · {shortened(text, 70)}"
