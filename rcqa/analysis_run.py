"""Run one registered analysis (rcqa.analysis.registered) on an explanation, making first the second explanation an
analysis of two methods compares it with: the one place that both explains and analyses, which the `analyze` verb,
`reproduce`'s rows, rcqa.analyze and the dashboard's worker all call."""
from __future__ import annotations

from dataclasses import replace

from rcqa.analysis.registered import analysis
from rcqa.analysis.registry import AnalysisResult, Inputs
from rcqa.attribution.cache import ResultCache, cached_explain
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import IGSettings
from rcqa.model import QAModel
from rcqa.types import Attribution


def run_analysis(name: str, qa_model: QAModel, result: Attribution, settings: IGSettings, aggregation: str = "l2",
            k: int = 5, target: int = 0, cache: ResultCache | None = None, **options) -> AnalysisResult:
    """The analysis `name` of `result` (explained with `settings`); its companion explanation, if it needs one, is
    read from or written to `cache` (default: none kept)."""
    chosen = analysis(name)
    companion = None
    if (method := chosen.companion_of(settings.method)) is not None:
        if settings.windows == "all":
            raise ValueError(f"the {name} analysis compares two methods in the answer's window; explain that window "
                             "only (windows='answer')")
        other = replace(settings, method=method)
        companion = (explain(qa_model, result.example, other) if cache is None else
                     cached_explain(qa_model, result.example, other, cache)[0])
    return chosen.run(Inputs(result, aggregation, k, target, settings.method, companion), **options)
