"""The layers of docs/architecture.md hold: lint-imports (import-linter, contracts in setup.cfg) finds no import
that climbs to a higher layer and no import cycle among the modules of any package; and every top-level module of
rcqa has its layer (import-linter leaves a module the contract does not name unchecked)."""
import configparser
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import rcqa

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_imports_a_layer_above_it_or_back_in_a_circle():
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert command, "lint-imports is missing: pip install -r requirements.txt"
    checked = subprocess.run([command, "--config", str(ROOT / "setup.cfg")], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    assert "3 kept, 0 broken" in checked.stdout  # the layers, the pages through rcqa.ui, no cycles


def layered_modules() -> set[str]:
    """The names the layers contract places: one layer a line, its independent (|) or other (:) siblings apart, an
    optional layer in parentheses."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    layers = config["importlinter:contract:layers"]["layers"]
    return {name.strip("() ") for line in layers.splitlines() for name in re.split(r"[|:]", line) if name.strip()}


def test_every_top_level_module_of_rcqa_has_a_layer():
    # what `import rcqa.X` finds: every module and package beside rcqa/__init__.py
    modules = {module.name for module in pkgutil.iter_modules(rcqa.__path__)}
    assert {"memo", "catalog", "dataset", "__main__"} <= modules  # a module and a package of each kind are found
    assert modules - layered_modules() == set(), "add these to the layers contract in setup.cfg"
