"""load_model's models are shared by the whole process, so nothing may change one in place: not the library (a
notebook that explains a whole passage, then runs AttnLRP on the same model, gets a fresh model's numbers) and not
a test helper (test_attnlrp.py's randomised() once randomised the shared tiny BERT, and the AttnLRP tests after any
test that had it loaded compared a randomised model with a freshly loaded one)."""
import dataclasses
import shutil

import numpy as np
import torch
from transformers import AutoModelForQuestionAnswering

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from tests.helpers.random_weights import randomised


def test_randomising_a_loaded_model_leaves_the_shared_one_as_on_disk(tiny_model_dirs):
    shared = load_model(tiny_model_dirs["bert"])
    on_disk = AutoModelForQuestionAnswering.from_pretrained(tiny_model_dirs["bert"]).state_dict()
    changed = randomised(shared.model)
    assert changed is not shared.model
    assert not torch.equal(changed.qa_outputs.bias, on_disk["qa_outputs.bias"])
    assert all(torch.equal(value, on_disk[name]) for name, value in shared.model.state_dict().items())
    assert load_model(tiny_model_dirs["bert"]) is shared


def test_attnlrp_after_a_whole_passage_gives_a_fresh_models_numbers(tiny_model_dirs, tmp_path):
    """A copy of the folder is another model to load_model: the one loaded fresh, next to the one used before."""
    used = dataclasses.replace(load_model(tiny_model_dirs["bert"]), max_len=40, doc_stride=8)  # several windows
    fresh_folder = tmp_path / "bert"
    shutil.copytree(tiny_model_dirs["bert"], fresh_folder)
    fresh = dataclasses.replace(load_model(str(fresh_folder)), max_len=40, doc_stride=8)
    assert fresh.model is not used.model
    example = gallery_example("comet-who")
    whole = explain(used, example, ExplainSettings(steps=4, tolerance=None, windows="all"))
    assert whole.answer.n_windows > 1 and whole.settings.windows == "all"
    lrp = ExplainSettings(method="attnlrp")
    np.testing.assert_allclose(explain(used, example, lrp).scores, explain(fresh, example, lrp).scores,
                               rtol=1e-6, atol=1e-9)
