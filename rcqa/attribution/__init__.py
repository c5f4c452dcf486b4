"""Attributions of the answer to every layer's tokens: settings.py (ExplainSettings, resolve, SpanSpec, FoilSpec, baselines,
presets), explanation.py (explain, the one pipeline, which builds every Attribution), window.py (the explained
window), engine.py (the layer loop; prefix-cached layer-wise Integrated Gradients of one window), passage.py and
layout.py (the whole passage), quadrature.py, targets.py, stack.py (the layers above a layer), cache.py (the result
cache), methods/ (the other attribution methods, one file each)."""
