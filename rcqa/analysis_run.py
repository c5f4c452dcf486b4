"""Run one registered analysis (rcqa.analysis.registered) on an explanation, making first the second explanation an
analysis of two methods compares it with: the one place that both explains and analyses, which the `analyze` verb,
`reproduce`'s rows, rcqa.analyze and the dashboard's worker all call."""
from __future__ import annotations

from dataclasses import replace

from rcqa.analysis.registered import analysis
from rcqa.analysis.registry import AnalysisResult, Inputs
from rcqa.attribution.cache import ResultCache, cached_explain
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.model import QAModel
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution


def run_analysis(name: str, qa_model: QAModel, result: Attribution, settings: ExplainSettings, aggregation: Aggregation = DEFAULT_AGGREGATION,
            k: int = 5, target: int = 0, cache: ResultCache | None = None, **options) -> AnalysisResult:
    """The analysis `name` of `result` (explained with `settings`); its companion explanation, if it needs one, is
    read from or written to `cache` (default: none kept)."""
    companion = None
    if (other := companion_settings(name, settings)) is not None:
        companion = (explain(qa_model, result.example, other) if cache is None else
                     cached_explain(qa_model, result.example, other, cache)[0])
    return analysis(name).run(Inputs(result, aggregation, k, target, settings.method, companion), **options)


def companion_settings(name: str, settings: ExplainSettings) -> ExplainSettings | None:
    """The settings of the second explanation the analysis `name` compares one explained with `settings` with (the
    same settings, the companion's method); None for an analysis of one method. What running it costs is that
    explanation's price: the analysis itself reads arrays already computed."""
    if (method := analysis(name).companion_of(settings.method)) is None:
        return None
    if settings.windows == "all":
        raise ValueError(f"the {name} analysis compares two methods in the answer's window; explain that window "
                         "only (windows='answer')")
    return replace(settings, method=method)
