"""No folder or module in the checkout is named as a third-party package the library imports: with its parent on
the path it would be imported instead of the real one (a folder needs no __init__.py for that), and an import graph
read by path takes the library's `import spacy` for an import of it."""
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULE_SUFFIXES = (".py", ".pyi", ".pyc", ".so", ".pyd")


def third_party_names() -> set[str]:
    """The top-level names rcqa's modules import that are neither rcqa's nor the standard library's."""
    names = set()
    for path in (ROOT / "rcqa").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - {"rcqa", "__future__"} - set(sys.stdlib_module_names)


def tree_paths() -> list[Path]:
    """Every file git tracks or would track (ignored ones, as .venv's, left out) and every folder above one."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    files = [Path(name) for name in listed if name and (ROOT / name).exists()]
    return sorted(set(files) | {parent for f in files for parent in f.parents if parent != Path(".")})


def importable_name(path: Path) -> str:
    """The name `import` finds this file or folder by, with its parent on the path."""
    if (ROOT / path).is_dir():
        return path.name
    name = path.name.split(".")[0]
    return name if path.name.endswith(MODULE_SUFFIXES) else ""


def test_the_library_imports_the_third_party_names_checked():
    names = third_party_names()
    assert {"spacy", "lemminflect", "torch", "transformers", "streamlit", "numpy", "scipy", "pandas", "plotly",
            "pyarrow", "dask"} <= names
    assert not names & {"os", "json", "rcqa", "typing"}


def test_no_folder_or_module_in_the_checkout_shadows_a_third_party_package():
    names = third_party_names()
    shadowing = [path.as_posix() for path in tree_paths() if importable_name(path) in names]
    assert shadowing == []


def test_a_shadowing_folder_or_module_would_be_found():
    assert importable_name(Path("scripts")) == "scripts"  # a folder, with or without __init__.py
    assert importable_name(Path("tests/spacy.py")) == "spacy"
    assert importable_name(Path("scripts/gpu_stage/stubs/spacy.py.txt")) == ""  # text, not importable
    assert Path("rcqa/ui/dashboard") in tree_paths()  # folders are listed, not only files
