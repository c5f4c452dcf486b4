"""Attributions of the answer to every layer's tokens: settings.py (IGSettings, baselines, presets), engine.py
(prefix-cached layer-wise Integrated Gradients), quadrature.py, targets.py, stack.py (the layers above a layer),
cache.py (the result cache), methods/ (the other attribution methods, one file each)."""
