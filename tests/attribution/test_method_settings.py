"""Each layer-wise method records the settings it read, in its own class (rcqa.types.method_settings), and its
cache key hashes only those of the path's fields: a result says what made its numbers, and a setting the method
never reads finds the same result."""
import json
from dataclasses import replace

import pytest

from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.attribution.lrp.rules import EPSILON
from rcqa.attribution.settings import ExplainSettings, resolve
from rcqa.gallery import gallery_example
from rcqa.types import Attribution
from rcqa.types.method_settings import MethodSettings, NoSettings, PathSettings, RelevanceSettings

EXAMPLE = gallery_example("comet-who")


def test_a_gradient_x_activation_result_no_longer_claims_the_pad_baseline_or_eight_steps(tiny_bert, tmp_path):
    settings = resolve(method="gradient_x_activation")
    assert (settings.baseline, settings.steps) == ("pad", 8)  # what the request carries, unread
    result = explain(tiny_bert, EXAMPLE, settings)
    assert result.method_settings == NoSettings()
    recorded = result.to_dict()
    assert recorded["method_settings"] == {"kind": "none"}
    assert not {"baseline", "rule", "steps", "tolerance", "max_steps"} & set(recorded["settings"])
    assert recorded["settings"]["method"] == "gradient_x_activation"
    # and so it stays in the cache's file, read back
    path = tmp_path / "result.npz"
    path.write_bytes(result.to_npz(compact=True))
    again = Attribution.from_npz(path)
    assert again.method_settings == NoSettings() and "steps" not in again.to_dict()["settings"]


def test_ig_records_its_path_and_attnlrp_its_epsilon(tiny_bert):
    settings = ExplainSettings(baseline="zero", rule="riemann_right", steps=3, tolerance=None)
    ig = explain(tiny_bert, EXAMPLE, settings)
    assert ig.method_settings == PathSettings("zero", "riemann_right", 3, None, 128)
    assert {k: ig.to_dict()["settings"][k] for k in ("baseline", "rule", "steps")} == {
        "baseline": "zero", "rule": "riemann_right", "steps": 3}
    lrp = explain(tiny_bert, EXAMPLE, resolve(method="attnlrp"))
    assert lrp.method_settings == RelevanceSettings(epsilon=EPSILON) and EPSILON == 1e-6
    assert "baseline" not in lrp.to_dict()["settings"]
    assert MethodSettings.from_dict(json.loads(json.dumps(lrp.to_dict()["method_settings"]))) == lrp.method_settings


def test_changing_igs_steps_changes_igs_cache_key_and_no_other_methods(tiny_bert):
    fingerprint = tiny_bert.fingerprint
    for method, changes in (("integrated_gradients", True), ("attnlrp", False), ("gradient_x_activation", False)):
        settings = resolve(method=method)
        keys = {ResultCache.key(fingerprint, EXAMPLE, replace(settings, **change))
                for change in ({}, {"steps": 16}, {"baseline": "zero"}, {"rule": "riemann_right", "tolerance": None})}
        assert (len(keys) == 4) is changes and (len(keys) == 1) is not changes, method
        # what every method reads still tells results apart
        assert ResultCache.key(fingerprint, EXAMPLE, replace(settings, targets=("start_logit",))) not in keys


def test_an_igs_key_is_the_one_committed_results_were_kept_under():
    """The committed runs' and shipped results' keys hashed every setting: IG's still does, and another method's
    with the path's fields at their defaults (what its shipped results hold) is that same hash."""
    import hashlib

    from rcqa.attribution.cache import FORMAT

    def every_field_key(settings):
        identity = {"format": FORMAT, "model": "f", "passage": EXAMPLE.passage, "question": EXAMPLE.question,
                    "settings": settings.to_dict(), "gold": None}
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]

    for settings in (ExplainSettings(), ExplainSettings(steps=20, baseline="zero"), resolve(method="attnlrp"),
                     resolve(method="gradient_x_activation")):
        assert ResultCache.key("f", EXAMPLE, settings) == every_field_key(settings)


def test_an_unknown_kind_of_method_settings_is_refused_in_one_sentence():
    with pytest.raises(ValueError, match=r"^unknown method settings 'lattice'; known: path, relevance, none$"):
        MethodSettings.from_dict({"kind": "lattice"})
