"""The gallery's explanations shipped with the package (rcqa.attribution.shipped): one for every gallery example
and method, under the key Explore opens on, and each what a fresh explanation gives: the first screen shows the
model's own numbers, never stale ones."""
import dataclasses
import os

import numpy as np
import pytest

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.attribution.layerwise import LAYERWISE_METHODS
from rcqa.attribution.settings import FoilSpec, resolve
from rcqa.attribution.shipped import SHIPPED_DIR, shipped_result, with_layer_outputs
from rcqa.gallery import GALLERY
from rcqa.model import load_model
from rcqa.ui.view import View


def opening_settings(method: str, versus: bool = False):
    """The settings Explore opens on with this method chosen, as a visitor's click sets them; with `versus`, the
    runner-up contrast Side by side opens on beside them."""
    view = View()
    view.method = method
    view.target = resolve("default", method=method).targets[0]  # an answered question's: the method's own
    settings = view.settings()
    return dataclasses.replace(settings, contrast=FoilSpec("runner-up")) if versus else settings


@pytest.fixture(scope="module")
def default_model():
    return load_model("default")


def test_every_gallery_example_and_method_is_shipped_and_nothing_else(default_model):
    keys = {ResultCache.key(default_model.fingerprint, example, opening_settings(method, versus))
            for example in GALLERY for method in LAYERWISE_METHODS for versus in (False, True)}
    shipped = {path.name.removeprefix("rcqa-result-").removesuffix(".npz") for path in SHIPPED_DIR.glob("*.npz")}
    assert shipped == keys  # a stale file (an older passage, model or setting) would be dead weight in the package


def same_but_rounding(a, b) -> bool:
    """Equal, but for floats, which may differ by float32's accumulated rounding (1e-4 relative or absolute: the
    logits of two machines differed by at most 1.2e-5, the probabilities by 7e-10)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and bool(np.isclose(a, b, rtol=1e-4,
                                                                                                atol=1e-4))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_but_rounding(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_but_rounding(x, y) for x, y in zip(a, b))
    return a == b


def test_rounding_is_all_that_may_differ():
    assert same_but_rounding({"logit": 6.785297870635986, "text": "Priya"}, {"logit": 6.785299777984619, "text": "Priya"})
    assert not same_but_rounding({"logit": 6.785, "text": "Priya"}, {"logit": 6.795, "text": "Priya"})
    assert not same_but_rounding({"logit": 6.785, "text": "Priya"}, {"logit": 6.785, "text": "Raman"})
    assert not same_but_rounding([{"start": 3}], [{"start": 4}])


def assert_fresh(default_model, example, settings) -> None:
    shipped = shipped_result(default_model, example, ResultCache.key(default_model.fingerprint, example, settings))
    fresh = explain(default_model, example, settings)
    assert shipped is not None and shipped.example == example, example.id
    assert (shipped.words, shipped.tokens, shipped.layers) == (fresh.words, fresh.tokens, fresh.layers), example.id
    # the same spans, texts and tokens; the logits and probabilities to float32's rounding, which the CPU's kernels
    # vary in the last digits (end logits 6.7852979 and 6.7852998 on two machines for the same weights and input)
    assert same_but_rounding(dataclasses.asdict(shipped.answer), dataclasses.asdict(fresh.answer)), example.id
    assert same_but_rounding([dataclasses.asdict(t) for t in shipped.targets],
                             [dataclasses.asdict(t) for t in fresh.targets]), example.id
    # float32 scores (rcqa.types.compact_scores) from float32 arithmetic, whose last digits vary with the CPU's
    # kernels: two machines differed by at most 2.5e-6 of the largest score (canal-long), and the completeness
    # errors by 1.3e-5 (a contrast's); a stale file (another model, passage or setting) differs by far more
    scale = float(np.abs(fresh.scores).max())
    assert np.allclose(shipped.scores, fresh.scores, rtol=1e-4, atol=1e-5 * scale), example.id
    assert [c.relative_error for c in shipped.completeness] == \
           pytest.approx([c.relative_error for c in fresh.completeness], rel=1e-3, abs=1e-4), example.id
    # the layer outputs, left out of the file, are put back as the engine kept them
    assert shipped.hidden_states.shape == fresh.hidden_states.shape, example.id
    assert np.allclose(shipped.hidden_states, fresh.hidden_states, atol=1e-5), example.id


@pytest.mark.slow  # 16 explanations with IG's default settings on the default model
@pytest.mark.parametrize("example", GALLERY, ids=[example.id for example in GALLERY])
def test_every_first_screen_is_a_fresh_explanation(default_model, example):
    assert_fresh(default_model, example, opening_settings("integrated_gradients"))


# of the other 80, one example of each kind, which an engine whose numbers changed without a new cache FORMAT would
# fail; RCQA_SHIPPED_ALL=1 checks every one (about 10 minutes on 2 cores), as scripts/ship_gallery_explanations.py asks
CHECKED = GALLERY if os.environ.get("RCQA_SHIPPED_ALL") else GALLERY[2:3]


@pytest.mark.slow
@pytest.mark.parametrize("example", CHECKED, ids=[example.id for example in CHECKED])
@pytest.mark.parametrize("versus", [False, True], ids=["explore", "side-by-side-runner-up"])
@pytest.mark.parametrize("method", list(LAYERWISE_METHODS))
def test_each_kind_of_shipped_explanation_is_a_fresh_one(default_model, method, versus, example):
    assert_fresh(default_model, example, opening_settings(method, versus))


def test_layer_outputs_are_put_back_only_where_missing(default_model):
    example = GALLERY[0]
    fresh = explain(default_model, example, opening_settings("attnlrp"))
    assert with_layer_outputs(default_model, fresh) is fresh  # kept ones are not recomputed
