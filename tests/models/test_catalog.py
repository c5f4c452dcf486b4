"""Which models load: canonical names (one model, one cache entry), public mode's catalog, the hub only on opt-in."""
import os
import shutil
from pathlib import Path

import pytest

import rcqa.model.checkpoint as model_module
from rcqa.catalog import MAX_NAME, canonical, catalog, in_catalog, may_load, offered, shown_name
from rcqa.model import ModelLoadError, load_model


def test_spellings_of_one_folder_are_one_model(tiny_model_dirs, monkeypatch):
    folder = Path(tiny_model_dirs["bert"])
    monkeypatch.chdir(folder.parent)
    spellings = [str(folder), f"{folder}/", f"{folder.parent}//{folder.name}", f"./{folder.name}",
                 f"{folder.parent}/./{folder.name}"]
    assert {canonical(s) for s in spellings} == {str(folder.resolve())}
    assert len({id(load_model(s)) for s in spellings}) == 1
    assert canonical("org//model/") == "org/model" and canonical(" default ") == "default"


def test_public_mode_loads_only_the_catalog(tiny_model_dirs, monkeypatch, tmp_path):
    monkeypatch.setenv("RCQA_PUBLIC", "1")
    monkeypatch.setenv("RCQA_MODELS", tiny_model_dirs["bert"])
    assert load_model(tiny_model_dirs["bert"] + "/").name == str(Path(tiny_model_dirs["bert"]).resolve())
    secret = tmp_path / "secret-folder"
    secret.mkdir()
    for refused in (tiny_model_dirs["roberta"], str(secret), "/etc", "org/some-model"):
        with pytest.raises(ModelLoadError) as error:
            load_model(refused)
        assert "offers only the models" in str(error.value)
        assert "secret" not in str(error.value) and "/" not in str(error.value)  # never says what exists


def test_a_folder_of_model_folders_offers_each(tiny_model_dirs, monkeypatch):
    parent = Path(tiny_model_dirs["bert"]).parent
    monkeypatch.setenv("RCQA_MODELS", os.pathsep.join([str(parent), "org/model"]))
    assert catalog() == ["default", "default-squad2", *sorted(str(Path(d).resolve()) for d in tiny_model_dirs.values()),
                         "org/model"]


def test_the_embedded_models_are_names_not_paths_and_public_mode_offers_both(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "default-squad2").mkdir()  # a folder of that name here is not the embedded model
    assert canonical(" default-squad2 ") == "default-squad2" and canonical("./default-squad2") != "default-squad2"
    monkeypatch.setenv("RCQA_PUBLIC", "1")
    monkeypatch.delenv("RCQA_MODELS", raising=False)
    monkeypatch.delenv("RCQA_MODEL", raising=False)
    assert catalog() == ["default", "default-squad2"]
    assert may_load("default-squad2") and not may_load("./default-squad2")


def test_the_hub_is_reached_only_when_the_operator_opts_in(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(model_module, "_endpoint_reachable", lambda url, timeout=3.0: True)
    monkeypatch.delenv("RCQA_HUB", raising=False)
    assert model_module._hub_options("org/model") == {"local_files_only": True}
    monkeypatch.setenv("RCQA_HUB", "1")
    assert model_module._hub_options("org/model") == {}


@pytest.mark.parametrize("name", ["a" * 300, f"org/{'a' * 300}", f"./{'a' * 300}"])
def test_a_name_the_file_system_cannot_hold_names_no_folder_and_loads_nothing(name, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert canonical(name).endswith("a" * 300) and not in_catalog(name)  # before: OSError, File name too long
    with pytest.raises(ModelLoadError):
        load_model(name)


def test_a_model_name_is_bounded_with_one_sentence():
    name = "a" * (MAX_NAME + 1)
    assert not in_catalog(name)
    with pytest.raises(ModelLoadError, match=f"at most {MAX_NAME:,} characters; this one has {MAX_NAME + 1:,}$"):
        load_model(name)


def test_public_mode_names_a_folder_by_its_last_parts_never_its_path(tiny_model_dirs, monkeypatch, tmp_path):
    bert, roberta = (str(Path(tiny_model_dirs[arch]).resolve()) for arch in ("bert", "roberta"))
    twin = str(shutil.copytree(bert, tmp_path / "mirror" / "bert").resolve())  # another folder named bert
    monkeypatch.delenv("RCQA_MODEL", raising=False)
    monkeypatch.setenv("RCQA_MODELS", os.pathsep.join([bert, twin, roberta]))
    monkeypatch.delenv("RCQA_PUBLIC", raising=False)
    assert shown_name(bert) == bert  # a researcher's own machine: the path
    monkeypatch.setenv("RCQA_PUBLIC", "1")
    assert (shown_name(bert), shown_name(twin)) == (f"{Path(bert).parent.name}/bert", "mirror/bert")
    assert (shown_name(roberta), shown_name("default"), shown_name("/elsewhere/x")) == ("roberta", "default", "x")
    assert (offered("roberta"), offered("mirror/bert"), offered(f"{bert}/")) == (roberta, twin, bert)
    assert offered("bert") is None  # two folders are named so: neither is shown by it alone


def test_a_home_folder_of_no_user_is_one_sentence_and_a_links_name_is_never_expanded(monkeypatch):
    monkeypatch.setattr(Path, "expanduser", lambda self: pytest.fail(f"{self} was expanded"))
    assert offered("~nosuchuser") is None and offered("model:~x") is None and offered("./default") is None
    monkeypatch.undo()
    with pytest.raises(ModelLoadError, match="^~nosuchuser names the home folder of a user this machine does not "
                                              "have$"):
        load_model("~nosuchuser/model")  # before: RuntimeError, Could not determine home directory


def test_offered_reads_the_catalog_once_and_a_shown_name_follows_the_catalog(tiny_model_dirs, monkeypatch, tmp_path):
    import rcqa.catalog

    bert, roberta = (str(Path(tiny_model_dirs[arch]).resolve()) for arch in ("bert", "roberta"))
    monkeypatch.delenv("RCQA_MODEL", raising=False)
    monkeypatch.setenv("RCQA_MODELS", os.pathsep.join([bert, roberta]))
    monkeypatch.setenv("RCQA_PUBLIC", "1")
    canonicalised = []
    monkeypatch.setattr(rcqa.catalog, "canonical", lambda name: canonicalised.append(name) or canonical(name))
    assert offered("roberta") == roberta
    assert canonicalised == [bert, roberta]  # once each (before: again for every folder's shown name, 6 in all)
    assert shown_name(bert) == shown_name(bert) == "bert"
    twin = str(shutil.copytree(bert, tmp_path / "mirror" / "bert").resolve())
    monkeypatch.setenv("RCQA_MODELS", os.pathsep.join([bert, twin, roberta]))  # another folder named bert, added
    assert shown_name(bert) == f"{Path(bert).parent.name}/bert"  # the name kept was the other catalog's
