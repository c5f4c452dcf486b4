import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach a hub: they load what they build
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `pytest -n 2`: the test processes share the cores, so each runs torch, and the servers and workers it starts,
    # on one thread. Two processes' OpenMP pools each as wide as the machine spin against each other: the run's CPU
    # time doubled (16 to 31 minutes) and its wall time barely moved. Set before torch is first imported.
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, "1")

from tests.helpers.tiny_models import ARCHITECTURES, build

ROOT = Path(__file__).resolve().parents[1]
# The unit tier (python -m pytest -m unit, under a minute): tests worked out by hand that build no model. A test here
# that builds one fails (no_model_in_unit_tests below), so the list cannot quietly grow a slow test.
UNIT_FILES = frozenset({
    "tests/analysis/test_analysis.py",
    "tests/attribution/test_quadrature.py",
    "tests/attribution/test_settings.py",
    "tests/attribution/test_targets.py",
    "tests/dataset/test_dataset_report.py",
    "tests/dataset/test_documents.py",
    "tests/faithfulness/test_entry.py",
    "tests/faithfulness/test_paired.py",
    "tests/inputs/test_data.py",
    "tests/inputs/test_text.py",
    "tests/negatives/test_negatives.py",
    "tests/negatives/test_perturbations.py",
    "tests/qa/test_decode.py",
    "tests/qa/test_evaluate.py",
})
# of those files, what is no unit test: a t-SNE fit (18 s here), and the report's images drawn in Chromium
NOT_UNIT = frozenset({
    "tests/analysis/test_analysis.py::test_tsne_is_sklearns_with_the_seed_and_the_capped_perplexity_it_reports",
    "tests/dataset/test_dataset_report.py::test_report_figures_as_png_and_svg",
})


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.relative_to(ROOT).as_posix() in UNIT_FILES and item.nodeid not in NOT_UNIT:
            item.add_marker(pytest.mark.unit)


@pytest.fixture(autouse=True)
def no_model_in_unit_tests(request, monkeypatch):
    """A unit test that builds a transformers model (loaded, random or tiny) fails, naming the rule."""
    if request.node.get_closest_marker("unit") is None:
        return
    from transformers import PreTrainedModel

    def refused(*args, **kwargs):
        raise AssertionError("a unit test builds no model: move this test out of UNIT_FILES (tests/conftest.py)")

    monkeypatch.setattr(PreTrainedModel, "__init__", refused)


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tiny-models")
    return {arch: str(build(arch, root / arch)) for arch in ARCHITECTURES}


@pytest.fixture(scope="session")
def tiny_bert(tiny_model_dirs):
    """The tiny BERT QA model, loaded once (rcqa.model.load_model keeps it)."""
    from rcqa.model import load_model

    return load_model(tiny_model_dirs["bert"])


@pytest.fixture(scope="session")
def abstaining_tiny_dir(tiny_model_dirs, tmp_path_factory) -> str:
    """The tiny BERT with a SQuAD 2.0 card whose threshold is so low that null score − best span score always
    exceeds it: a model that says "no answer" to every question unless told --no-null."""
    import json
    import shutil

    folder = tmp_path_factory.mktemp("abstaining") / "bert-squad2"
    shutil.copytree(tiny_model_dirs["bert"], folder)
    (folder / "rcqa_card.json").write_text(json.dumps({"no_answer": {"threshold": -1e9}}))
    return str(folder)


@pytest.fixture(scope="session")
def family_dir(tmp_path_factory):
    """name → the folder of that family's tiny random checkpoint (tests.helpers.families), built once when asked."""
    from tests.helpers.families import BY_NAME, build_family

    root = tmp_path_factory.mktemp("families")
    built = {}

    def folder(name: str) -> str:
        if name not in built:
            built[name] = str(build_family(BY_NAME[name], root / name))
        return built[name]

    return folder


@pytest.fixture(scope="module")
def app_env(tiny_model_dirs, tmp_path_factory):
    """The app's default model is the tiny BERT; results are cached in a fresh folder; no hub is reached."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RCQA_MODEL", tiny_model_dirs["bert"])
        patch.setenv("RCQA_RESULT_CACHE", str(tmp_path_factory.mktemp("results")))
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield tiny_model_dirs


@pytest.fixture
def one_torch_thread():
    """Tiny forwards on shared cores run many times faster on one torch thread than on two."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
