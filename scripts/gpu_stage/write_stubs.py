"""Write the stand-ins for spaCy and lemminflect into the GPU bundle as importable packages.

Their source is kept in stubs/ as text, one file a module named by its dotted name (`spacy.util.py.txt`), not as
packages named spacy and lemminflect: inside the checkout those would shadow the real ones for anything that reads
imports by path, and make scripts/ look like a dependency of the library. run.sh puts the folder written here first
on PYTHONPATH.

    python scripts/gpu_stage/write_stubs.py DEST     (assemble.sh: DEST is .gpu/stubs)
"""
import sys
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "stubs"
SUFFIX = ".py.txt"


def modules() -> dict[str, str]:
    """Each stand-in module's dotted name and its source."""
    return {path.name.removesuffix(SUFFIX): path.read_text() for path in sorted(SOURCES.glob(f"*{SUFFIX}"))}


def write(dest: Path) -> list[Path]:
    """Every module under dest: a name that another's begins with is a package (its __init__.py), and every package
    on the way to a module gets one, empty where no source is kept for it. Returns the files written."""
    sources = modules()
    names = set(sources)
    for name in sources:  # spacy.lang.en.stop_words needs spacy.lang and spacy.lang.en as packages
        parts = name.split(".")
        names.update(".".join(parts[:i]) for i in range(1, len(parts)))
    packages = {name for name in names if any(other.startswith(name + ".") for other in names)}
    written = []
    for name in sorted(names):
        path = dest.joinpath(*name.split("."))
        path = path / "__init__.py" if name in packages else path.with_name(path.name + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sources.get(name, ""))
        written.append(path)
    return written


if __name__ == "__main__":
    write(Path(sys.argv[1]))
