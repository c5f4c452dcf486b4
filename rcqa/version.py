"""Which rcqa is running: an installed distribution's version, else (run from a checkout) `git describe`."""
from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
UNRELEASED = "rcqa-unreleased"  # neither installed nor in a git checkout: there is no finer version to record


def version() -> str:
    """The version of the code that is imported: the package metadata's when this very folder was installed (a
    wheel or `pip install .`), else `git describe` of the checkout it sits in (an editable install or none)."""
    return _installed_version() or _described_checkout() or UNRELEASED


def _installed_version() -> str | None:
    try:
        distribution = metadata.distribution("rcqa")
    except metadata.PackageNotFoundError:
        return None
    # another rcqa may be installed in this environment while this one runs from a checkout: only the
    # distribution whose files are these modules speaks for them
    installed = Path(str(distribution.locate_file("rcqa/__init__.py"))).resolve()
    return distribution.version if installed == PACKAGE / "__init__.py" else None


def _described_checkout() -> str | None:
    try:
        described = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], check=False,
                                   capture_output=True, text=True, timeout=10, cwd=PACKAGE)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return described.stdout.strip() if described.returncode == 0 and described.stdout.strip() else None
