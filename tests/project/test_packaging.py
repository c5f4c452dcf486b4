"""The package's pins are requirements.txt's: `pip install -r requirements.txt -e .` (the README's set-up) and
`pip install rcqa` install the same versions."""
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def pins(lines) -> dict[str, Requirement]:
    found = [Requirement(line.split("#")[0].strip()) for line in lines if line.split("#")[0].strip()]
    return {requirement.name.lower(): requirement for requirement in found}


def test_requirements_txt_pins_exactly_the_package_dependencies_and_its_test_and_docs_extras():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = pins(project["dependencies"])
    tests = pins(project["optional-dependencies"]["test"])
    docs = pins(project["optional-dependencies"]["docs"])
    required = pins((ROOT / "requirements.txt").read_text().splitlines())
    assert all(str(r.specifier).startswith("==") for r in [*runtime.values(), *required.values()])
    assert {name: str(r) for name, r in required.items() if name in runtime} == {n: str(r) for n, r in runtime.items()}
    # the rest of requirements.txt is for the tests, the docs build among them (tests/project/test_docs.py); CI installs
    # the browser test's playwright on its own
    assert {name: str(r) for name, r in required.items() if name not in runtime} == \
        {name: str(r) for name, r in {**tests, **docs}.items() if name != "playwright"}
    assert f"pip install --quiet {tests['playwright']}" in (ROOT / ".ci" / "run").read_text()


def test_the_train_extra_is_requirements_train_txt():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert pins(extras["train"]) == pins((ROOT / "requirements-train.txt").read_text().splitlines())


class _Distribution:
    def __init__(self, root: Path):
        self.root, self.version = root, "9.9.9"

    def locate_file(self, name: str) -> Path:
        return self.root / name


def test_the_version_is_the_installed_distributions_only_when_it_is_this_code(monkeypatch, tmp_path):
    from rcqa import version

    described = version._described_checkout()
    assert described and described != version.UNRELEASED  # the tests run from a git checkout
    monkeypatch.setattr(version.metadata, "distribution", lambda name: _Distribution(version.PACKAGE.parent))
    assert version.version() == "9.9.9"
    # another rcqa installed in the environment does not speak for this checkout
    monkeypatch.setattr(version.metadata, "distribution", lambda name: _Distribution(tmp_path))
    assert version.version() == described
