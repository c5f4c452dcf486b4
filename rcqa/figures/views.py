"""Each result's own views, registered with rcqa.drawing when the figures are imported: what a result's show and
Jupyter display draw (Attribution, Comparison, AnswerLens, Interventions, HeadScores, and a SideBySide pair), with the
builders beside this module. The results never import the figures; the figures register here."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rcqa import drawing
from rcqa.analysis.pair import SideBySide
from rcqa.attention_heads import HeadScores
from rcqa.faithfulness.compare import Comparison
from rcqa.figures.answer import answer_summary
from rcqa.figures.common import Chart
from rcqa.figures.heads import head_grid
from rcqa.figures.layers import completeness, conservation_ledger, jsd
from rcqa.figures.lens import knockouts, layer_answers
from rcqa.figures.methods import deletion_curves, method_heatmap, method_passages, rank_correlation
from rcqa.figures.pair import pair_chart, pair_html
from rcqa.figures.roles import pos_mix, quantifiers, roles
from rcqa.figures.whole_input import passage_overview, start_end
from rcqa.figures.words import answer_word, heatmap, topk_grid, topk_passage, topk_words, word_across_layers
from rcqa.lens.interventions import Interventions
from rcqa.lens.readout import AnswerLens
from rcqa.types import DEFAULT_AGGREGATION, VIEWS, Aggregation, Attribution

COMPARISON_VIEWS = ("methods", "deletion", "correlation")  # what Comparison.show draws
LENS_VIEWS = ("layers",)  # what AnswerLens.show draws
INTERVENTION_VIEWS = ("knockouts",)  # what Interventions.show draws


def view_chart(result: Attribution, view: str = "heatmap", k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION,
               target: int = 0, layer: int = -1, word: int | None = None) -> Chart:
    """The Chart of one of VIEWS (Attribution.figure says what each draws); ValueError, in one sentence, for a view
    this result has nothing to draw in."""
    _only_view(VIEWS, view)
    views: dict[str, Callable[[], Chart | None]] = {
        "heatmap": lambda: heatmap(result, aggregation, target),
        "overview": lambda: passage_overview(result, aggregation=aggregation, target=target),
        "start-end": lambda: start_end(result, aggregation),
        "top-k": lambda: topk_words(result, k, aggregation, target),
        "top-k-passage": lambda: topk_passage(result, _index(layer, len(result.layers), "layer"), k, aggregation,
                                              target),
        "top-k-grid": lambda: topk_grid(result, k, aggregation, target),
        "roles": lambda: roles(result, k, aggregation, target),
        "pos": lambda: pos_mix(result, k, aggregation, target),
        "quantifiers": lambda: quantifiers(result, k, aggregation, target),
        "word": lambda: word_across_layers(
            result, answer_word(result) if word is None else _index(word, len(result.passage_words()), "word"),
            aggregation, target),
        "completeness": lambda: completeness(result),
        "ledger": lambda: conservation_ledger(result, target),
        "jsd": lambda: jsd(result, "full", k, aggregation, target),
    }
    if (chart := views[view]()) is None:
        raise ValueError(f"this result has no {view} view: {_NOTHING_TO_DRAW[view]}")
    return chart


def _index(index: int, count: int, what: str) -> int:
    """One of `count` things by its index (negative: from the end), or ValueError saying how many there are."""
    if not -count <= index < count:
        raise ValueError(f"no {what} {index}: this result has {count} (0 to {count - 1}, or -1 for the last)")
    return index % count


_NOTHING_TO_DRAW = {  # why a view that draws only some results draws nothing of this one
    "start-end": "it does not explain both start_logit and end_logit (explain with targets=('start_logit', "
                 "'end_logit'))",
    "quantifiers": "the question asks no 'how many' or 'how much' over a passage with two numbers or more",
    "ledger": "only AttnLRP keeps a ledger (method='attnlrp')",
}


def notebook_html(result: Attribution, k: int = 5) -> str:
    """The answer, the heatmap (as Plotly shows it in a notebook) and the last layer's top-k passage words."""
    figure = heatmap(result).plotly
    return (f"<div>{answer_summary(result.example, result.answer)}{figure._repr_html_()}"
            f"{topk_passage(result, len(result.layers) - 1, k).html}</div>")


def comparison_chart(comparison: Comparison, view: str = "methods") -> Chart:
    """The Chart of one of COMPARISON_VIEWS: each method's word scores, the deletion curves, or the methods' rank
    correlations."""
    if view == "methods":
        return method_heatmap(comparison)
    if view == "deletion":
        return deletion_curves(comparison)
    if view == "correlation":
        return rank_correlation(comparison)
    raise ValueError(f"unknown view {view!r}; choose one of {', '.join(COMPARISON_VIEWS)}")


def _only_view(views: tuple[str, ...], view: str) -> None:
    if view not in views:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(views)}")


def lens_chart(lens: AnswerLens, view: str = "layers") -> Chart:
    _only_view(LENS_VIEWS, view)
    return layer_answers(lens)


def interventions_chart(found: Interventions, view: str = "knockouts") -> Chart:
    _only_view(INTERVENTION_VIEWS, view)
    return knockouts(found)


@dataclass(frozen=True)
class HtmlView:
    """A view drawn as HTML (the passage with its top words marked), as a result's figure returns it: a notebook
    draws it, and write_html saves it as a Plotly figure's does."""

    html: str

    def _repr_html_(self) -> str:
        return self.html

    def write_html(self, path: str | Path) -> None:
        Path(path).write_text(f'<!DOCTYPE html>\n<meta charset="utf-8">\n{self.html}\n', encoding="utf-8")


def _figure_of(chart):
    """The drawing registry's figure function: a chart builder's Plotly figure, or its HTML as an HtmlView."""
    def figure(result, *view, **options):
        drawn = chart(result, *view, **options)
        return HtmlView(drawn.html) if drawn.figure is None else drawn.figure

    return figure


def _answer_and(chart):
    """Jupyter's view of a result with one figure: the question and answer, then the figure."""
    return lambda result: (f"<div>{answer_summary(result.example, result.answer)}"
                           f"{chart(result).figure._repr_html_()}</div>")


drawing.register(Attribution, _figure_of(view_chart), notebook_html)
def comparison_html(comparison: Comparison) -> str:
    """Jupyter's view of a comparison: the answer, each method's word scores, the passage shaded by each method, and
    the deletion curves."""
    return (f"<div>{answer_summary(comparison.example, comparison.answer)}"
            f"{method_heatmap(comparison).plotly._repr_html_()}{method_passages(comparison).html}"
            f"{deletion_curves(comparison).plotly._repr_html_()}</div>")


drawing.register(Comparison, _figure_of(comparison_chart), comparison_html)
drawing.register(AnswerLens, _figure_of(lens_chart), _answer_and(lens_chart))
drawing.register(Interventions, _figure_of(interventions_chart), _answer_and(interventions_chart))
drawing.register(SideBySide, _figure_of(pair_chart), pair_html)
drawing.register(HeadScores, _figure_of(head_grid), _answer_and(head_grid))
