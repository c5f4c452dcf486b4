"""Means over examples of the values they define: element-wise, and with 95 % bootstrap intervals (scipy's
percentile bootstrap, seeded). Undefined values are NaN in, and null (None) on the way to JSON."""
from __future__ import annotations

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 2000


def mean_with_interval(values: np.ndarray, seed: int = 0, resamples: int = RESAMPLES) -> dict:
    """Mean of the defined values with its 95 % percentile-bootstrap interval; the interval is null below two
    values, and collapses to the mean when every value is the same."""
    defined = values[~np.isnan(values)]
    if not defined.size:
        return {"mean": None, "low": None, "high": None, "n": 0}
    mean = float(defined.mean())
    if defined.size < 2:
        return {"mean": mean, "low": None, "high": None, "n": 1}
    if np.ptp(defined) == 0:
        return {"mean": mean, "low": mean, "high": mean, "n": int(defined.size)}
    from scipy import stats  # imported here: the figures and pages that only read intervals need no scipy

    interval = stats.bootstrap((defined,), np.mean, confidence_level=CONFIDENCE, n_resamples=resamples,
                               method="percentile", rng=np.random.default_rng(seed)).confidence_interval
    return {"mean": mean, "low": float(interval.low), "high": float(interval.high), "n": int(defined.size)}


def excludes_zero(low: float | None, high: float | None) -> bool:
    """Whether a paired interval tells two things apart: it exists and 0 lies outside it (the one rule every
    comparison's verdict follows; "not told apart" otherwise)."""
    return low is not None and high is not None and (low > 0 or high < 0)


def defined_means(stack: np.ndarray) -> np.ndarray:
    """The element-wise mean over examples (the first axis) of the defined entries; NaN where none defines one."""
    counts = (~np.isnan(stack)).sum(axis=0)
    total = np.nansum(stack, axis=0)
    return np.divide(total, counts, out=np.full(total.shape, np.nan), where=counts > 0)


def nullable(values: np.ndarray) -> list:
    """An array as nested lists for JSON, NaN (undefined) as None."""
    return np.where(np.isnan(values), np.array(None, dtype=object), values).tolist()
