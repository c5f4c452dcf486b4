import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach a hub: they load what they build
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from tests.tiny_models import ARCHITECTURES, build


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tiny-models")
    return {arch: str(build(arch, root / arch)) for arch in ARCHITECTURES}


@pytest.fixture(scope="session")
def tiny_bert(tiny_model_dirs):
    """The tiny BERT QA model, loaded once (rcqa.model.load_model keeps it)."""
    from rcqa.model import load_model

    return load_model(tiny_model_dirs["bert"])
