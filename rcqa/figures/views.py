"""Each result's own views, registered with rcqa.drawing when the figures are imported: what a result's show and
Jupyter display draw (Attribution, Comparison, AnswerLens, Interventions, HeadScores, and a SideBySide pair), with the
builders beside this module. The results never import the figures; the figures register here."""
from __future__ import annotations

from rcqa import drawing
from rcqa.analysis.pair import SideBySide
from rcqa.attention_heads import HeadScores
from rcqa.faithfulness.compare import Comparison
from rcqa.figures.answer import answer_summary
from rcqa.figures.common import Chart
from rcqa.figures.heads import head_grid
from rcqa.figures.layers import jsd
from rcqa.figures.lens import knockouts, layer_answers
from rcqa.figures.methods import deletion_curves, method_heatmap, method_passages, rank_correlation
from rcqa.figures.pair import pair_chart, pair_html
from rcqa.figures.roles import roles
from rcqa.figures.words import heatmap, topk_passage, topk_words
from rcqa.lens.interventions import Interventions
from rcqa.lens.readout import AnswerLens
from rcqa.types import DEFAULT_AGGREGATION, VIEWS, Aggregation, Attribution

COMPARISON_VIEWS = ("methods", "deletion", "correlation")  # what Comparison.show draws
LENS_VIEWS = ("layers",)  # what AnswerLens.show draws
INTERVENTION_VIEWS = ("knockouts",)  # what Interventions.show draws


def view_chart(result: Attribution, view: str, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """The Chart of one of VIEWS."""
    if view == "heatmap":
        return heatmap(result, aggregation, target)
    if view == "top-k":
        return topk_words(result, k, aggregation, target)
    if view == "roles":
        return roles(result, k, aggregation, target)
    if view == "jsd":
        return jsd(result, "full", k, aggregation, target)
    raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")


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


def _figure_of(chart):
    """The drawing registry's figure function: a chart builder's Plotly figure."""
    return lambda result, *view, **options: chart(result, *view, **options).figure


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
