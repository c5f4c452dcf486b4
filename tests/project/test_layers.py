"""The layers of docs/architecture.md hold: lint-imports (import-linter, contracts in setup.cfg) finds no import
that climbs to a higher layer and no import cycle among the modules of any package."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_imports_a_layer_above_it_or_back_in_a_circle():
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert command, "lint-imports is missing: pip install -r requirements.txt"
    checked = subprocess.run([command, "--config", str(ROOT / "setup.cfg")], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    assert "3 kept, 0 broken" in checked.stdout  # the layers, the pages through rcqa.ui, no cycles
