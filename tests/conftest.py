import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach a hub: they load what they build
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from tests.helpers.tiny_models import ARCHITECTURES, build


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
