"""Model loading through the real from_pretrained path, for every supported architecture."""
import shutil

import pytest
import torch

from rcqa.model import loaded as model_module
from rcqa.gallery import GALLERY, gallery_example
from rcqa.model import ModelLoadError, load_model, pick_device
from rcqa.qa import answer_with_windows
from rcqa.text import written_words
from tests.helpers.tiny_models import ARCHITECTURES, build, build_encoder_without_head


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_every_architecture_loads_and_answers_with_exact_offsets(tiny_model_dirs, architecture):
    qa_model = load_model(tiny_model_dirs[architecture])
    assert not qa_model.model.training
    assert qa_model.device == torch.device("cpu")
    for example in GALLERY[:3] + (gallery_example("canal-long"),):
        result, windows = answer_with_windows(qa_model, example.passage, example.question)
        assert result.nbest, architecture
        words = written_words(example.passage)
        for span in result.nbest:
            assert example.passage[span.start_char:span.end_char] == span.text
            assert span.start_char in {w.start_char for w in words} and span.end_char in {w.end_char for w in words}
            # its tokens cover its characters in its window (whole words may take a few more than 30 pieces)
            offsets = windows.offsets[span.window]
            assert span.start_token <= span.end_token
            assert offsets[span.start_token][0] <= span.start_char < offsets[span.start_token][1]
            assert offsets[span.end_token][0] < span.end_char <= offsets[span.end_token][1]


def test_a_model_is_loaded_once_per_process(tiny_model_dirs):
    assert load_model(tiny_model_dirs["bert"]) is load_model(tiny_model_dirs["bert"])


def test_fingerprint_is_stable_and_tells_weights_apart(tmp_path, tiny_model_dirs):
    first = load_model(tiny_model_dirs["bert"]).fingerprint
    model_module._loaded.clear()
    assert load_model(tiny_model_dirs["bert"]).fingerprint == first
    other = build("bert", tmp_path / "other-seed", seed=1)
    assert load_model(str(other)).fingerprint != first
    moved = shutil.copytree(tiny_model_dirs["bert"], tmp_path / "elsewhere")  # another checkout of the same model
    assert load_model(str(moved)).fingerprint == first


def test_a_model_whose_fingerprint_is_not_the_one_asked_for_is_refused(tmp_path, tiny_model_dirs):
    loaded = load_model(tiny_model_dirs["bert"])
    assert load_model(tiny_model_dirs["bert"], fingerprint=loaded.fingerprint) is loaded
    other = build("bert", tmp_path / "other-seed", seed=1)  # another model where the first one was
    with pytest.raises(ModelLoadError, match=f"its fingerprint is [0-9a-f]+, not {loaded.fingerprint}"):
        load_model(str(other), fingerprint=loaded.fingerprint)


def test_an_encoder_without_a_qa_head_is_refused(tmp_path):
    folder = build_encoder_without_head(tmp_path / "encoder")
    with pytest.raises(ModelLoadError, match="not an extractive-QA checkpoint"):
        load_model(str(folder))


def test_a_folder_that_is_not_a_model_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_model(str(tmp_path))


def test_a_hub_id_offline_fails_fast_with_a_fix(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelLoadError, match="local folder"):
        load_model("someone/bert-base-squad-not-cached")


def test_a_hub_id_with_an_unreachable_hub_fails_with_a_fix(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("RCQA_HUB", "1")
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens
    with pytest.raises(ModelLoadError, match="cannot reach the model hub"):
        load_model("someone/bert-base-squad")


def test_garbage_names_are_neither_folders_nor_hub_ids():
    with pytest.raises(ModelLoadError, match="neither a local folder nor a hub id"):
        load_model("../no/such/folder")


def test_device_choice(monkeypatch):
    monkeypatch.setenv("RCQA_DEVICE", "cpu")
    assert pick_device() == torch.device("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ModelLoadError, match="CUDA is not available"):
            pick_device("cuda")


def tiny_bert_bytes(config) -> int:
    """The tiny BERT QA model's float32 weights, counted by hand: embeddings (words, positions, token types, their
    LayerNorm), per block attention's four projections and LayerNorm, the feed-forward's two layers and LayerNorm,
    and the QA head's start and end (no pooler)."""
    h, inner = config.hidden_size, config.intermediate_size
    embeddings = (config.vocab_size + config.max_position_embeddings + config.type_vocab_size) * h + 2 * h
    block = 4 * (h * h + h) + 2 * h + (h * inner + inner) + (inner * h + h) + 2 * h
    return 4 * (embeddings + config.num_hidden_layers * block + 2 * h + 2)


@pytest.fixture
def empty_memo(monkeypatch):
    """load_model's memo, empty for the test and as it was after it."""
    monkeypatch.setattr(model_module, "_loaded", type(model_module._loaded)())


def test_the_models_kept_are_bounded_by_their_weights_memory_dropping_the_least_recent(tmp_path, monkeypatch,
                                                                                        empty_memo):
    folders = [str(build("bert", tmp_path / f"seed{seed}", seed=seed)) for seed in range(3)]
    first = load_model(folders[0])
    size = tiny_bert_bytes(first.config)
    assert first.weight_bytes == size
    monkeypatch.setenv(model_module.MODELS_MB_ENV, str(2.5 * size / 2**20))  # room for two, not three
    second = load_model(folders[1])
    assert load_model(folders[0]) is first  # both kept; the first is now the most recent
    load_model(folders[2])
    assert [name for name, _ in model_module._loaded] == [folders[0], folders[2]]  # the second, least recent, left
    assert load_model(folders[1]) is not second  # reloaded, not kept


def test_a_model_over_the_budget_alone_is_kept_alone(tmp_path, monkeypatch, empty_memo, tiny_model_dirs):
    monkeypatch.setenv(model_module.MODELS_MB_ENV, "0.001")  # 1 kB: less than any model
    load_model(tiny_model_dirs["bert"])
    kept = load_model(tiny_model_dirs["distilbert"])
    assert list(model_module._loaded.values()) == [kept]
    assert load_model(tiny_model_dirs["distilbert"]) is kept
