"""The manual builds: `zensical build --strict` over mkdocs.yml and docs/, into a temporary folder.

Strict mode turns every warning into a failure: a link to a missing page or anchor, an API reference
(`::: module`) that griffe cannot find, an unresolved cross-reference. A copy of the docs with one broken link
must fail the same build, so a green build means the check ran. README.md is read on GitHub, outside the site:
its relative links are checked here too."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("zensical", reason="the docs tools are pinned in requirements.txt: pip install -r requirements.txt")

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = ROOT / "mkdocs.yml"
# [text](target) and ![alt](target), not inside code spans
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # zensical colours its warnings character by character
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def build(tmp_path: Path, break_a_link: bool = False) -> subprocess.CompletedProcess:
    """Build a copy of docs/ with the project's mkdocs.yml, everything it writes kept under tmp_path.

    zensical wants docs_dir inside the config file's folder and keeps its cache there, so both are copied."""
    docs = shutil.copytree(ROOT / "docs", tmp_path / "docs")
    if break_a_link:
        with (docs / "speed.md").open("a") as page:
            page.write("\nSee [the old section](no-such-page.md).\n")
    config = yaml.safe_load(MKDOCS.read_text())
    config["docs_dir"], config["site_dir"] = "docs", "site"
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(ROOT)]
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    return subprocess.run([sys.executable, "-m", "zensical", "build", "--strict", "--config-file", str(config_file)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_the_manual_builds_strictly_with_the_api_reference_drawn_from_the_docstrings(tmp_path):
    built = build(tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert 'id="rcqa.types.Attribution"' in api and 'id="rcqa.dataset.runner"' in api


def test_a_broken_link_fails_the_strict_build(tmp_path):
    built = build(tmp_path, break_a_link=True)
    assert built.returncode != 0
    report = ANSI_COLOUR.sub("", built.stdout + built.stderr)
    assert "page does not exist" in report and "no-such-page.md" in report


def test_the_readme_links_only_to_files_that_exist():
    readme = (ROOT / "README.md").read_text()
    prose = re.sub(r"```.*?```", "", readme, flags=re.S)
    targets = [target for target in MARKDOWN_LINK.findall(prose) if "://" not in target]
    assert targets, "the README links to the manual"
    missing = [target for target in targets if not (ROOT / target.split("#")[0]).exists()]
    assert not missing, missing
