"""rcqa: layer-wise attributions for extractive question answering.

    import rcqa
    model = rcqa.load_model("default")
    result = rcqa.explain(model, passage, question)
    result.show("heatmap")          # or "top-k", "roles", "jsd"; in Jupyter the result draws itself
    result.save("comet.json")       # rcqa.load_result("comet.json") reads it back (any result: its file names its kind)
    pair = rcqa.compare(result, other)  # two explanations of the passage side by side; pair.show("jsd")

Every name is imported on first use (PEP 562), so `import rcqa` stays light: torch loads with the first model.
"""
from __future__ import annotations

import importlib

from rcqa import drawing as _drawing

_EXPORTS = {  # name -> the module that defines it
    "load_model": "rcqa.model", "answer": "rcqa.api", "explain": "rcqa.api", "compare_methods": "rcqa.api",
    "lens": "rcqa.lens", "intervene": "rcqa.api", "analyze": "rcqa.api", "reproduce": "rcqa.api",
    "PRESETS": "rcqa.attribution.settings", "ExplainSettings": "rcqa.attribution.settings", "load_result": "rcqa.api",
    "Attribution": "rcqa.types", "ExplainedTarget": "rcqa.types", "Comparison": "rcqa.api", "AnswerLens": "rcqa.api",
    "Interventions": "rcqa.api", "sanity_checks": "rcqa.api", "SanityCheck": "rcqa.api",
    "Example": "rcqa.types", "gallery_example": "rcqa.gallery", "compare": "rcqa.analysis.pair",
    "SideBySide": "rcqa.analysis.pair", "heads": "rcqa.api", "HeadScores": "rcqa.api",
    "sentence_check": "rcqa.api", "SentenceCheck": "rcqa.api", "SentenceEvidence": "rcqa.api",
    "IGSettings": "rcqa.types.settings",  # ExplainSettings' earlier name
}
__all__ = [*_EXPORTS, "__version__"]


def _import_figures() -> None:
    import rcqa.figures  # noqa: F401  (rcqa.figures.views registers how each result draws itself)


def _import_dataset_views() -> None:
    import rcqa.dataset.views  # noqa: F401  (registers how a DatasetSummary draws itself)


# a result's show reaches the figures through rcqa.drawing, never upwards; a dataset summary's views come second, as
# they are drawn less often and import the example views' figures anyway
_drawing.on_first_draw(_import_figures)
_drawing.on_first_draw(_import_dataset_views)


def __getattr__(name: str):
    if name == "__version__":
        from rcqa.version import version

        return version()
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rcqa' has no attribute {name!r}")
    module = importlib.import_module(_EXPORTS[name])
    value = module if name == "lens" else getattr(module, name)  # rcqa.lens: the package is the function
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
