"""The README's map of the package names every room a change may go to: each package and top-level module of rcqa/,
and each top-level folder of the checkout that holds Python; and every path it names exists.

An entry is a line of the map's block that starts at its left edge: paths, then two spaces or more, then what the
room holds. The first path is from the checkout's root; the paths after it (`rcqa/qa.py, evaluate.py`) are its
siblings. A folder or module named in the description (`pages/`, `interventions.py`) is inside the entry's folder,
or beside its module."""
import re
import subprocess
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# a folder (name/) or a module (name.py), possibly below another folder, standing alone in the text
NAMED = re.compile(r"(?<![\w./-])(\w+(?:/\w+)*(?:/|\.py))(?![\w.])")


def map_block(readme: str) -> str:
    (block,) = re.findall(r"^## A map of the package\n.*?^```\n(.*?)^```", readme, re.S | re.M)
    return block


def named_paths(block: str) -> set[PurePosixPath]:
    """Every path the map names, from the checkout's root."""
    named = set()
    for line in block.splitlines():
        if not line or line[0].isspace():
            continue
        paths, description = (re.split(r"\s{2,}", line, maxsplit=1) + [""])[:2]
        written = paths.split(", ")
        first, *siblings = map(PurePosixPath, written)
        room = first if written[0].endswith("/") else first.parent
        named |= {first, *(first.parent / s for s in siblings)}
        named |= {room / inside for inside in NAMED.findall(description)}
    return named


def test_the_map_is_read_as_written():
    # three entries worked out by hand: siblings beside the first path, names in a description inside its folder
    block = ("rcqa/qa.py, evaluate.py    answers · metrics\n"
             "rcqa/lens/                 the lens; interventions.py: knock-outs (see docs/lens.md)\n"
             "                           a continuation line naming other/ is no entry\n"
             "rcqa/ui/jobs/, worker/     the queue · its workers, pages/: one a page\n")
    assert named_paths(block) == {PurePosixPath(p) for p in (
        "rcqa/qa.py", "rcqa/evaluate.py", "rcqa/lens", "rcqa/lens/interventions.py", "rcqa/ui/jobs", "rcqa/ui/worker",
        "rcqa/ui/jobs/pages")}


def rooms() -> set[PurePosixPath]:
    """What the map must name: every package below rcqa/ (a folder with __init__.py), every module beside
    rcqa/__init__.py, and every top-level folder or module of the checkout holding Python that git tracks or
    would (ignored ones left out)."""
    tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "*.py"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split("\0")
    files = [PurePosixPath(name) for name in tracked if name and (ROOT / name).exists()]
    packages = {f.parent for f in files if f.name == "__init__.py" and f.parts[0] == "rcqa" and len(f.parts) > 2}
    modules = {f for f in files if f.parent == PurePosixPath("rcqa") and f.name != "__init__.py"}
    top = {PurePosixPath(f.parts[0]) for f in files if f.parts[0] != "rcqa"}
    return packages | modules | top


def test_every_package_and_module_of_rcqa_is_on_the_map():
    wanted = rooms()
    # a package, a sub-package and a module found, and the folders beside rcqa that hold Python
    assert {PurePosixPath("rcqa/ui/dashboard/pages"), PurePosixPath("rcqa/attribution/lrp"),
            PurePosixPath("rcqa/catalog.py"), PurePosixPath("scripts"), PurePosixPath("benchmarks"),
            PurePosixPath("app.py")} <= wanted
    missing = sorted(str(p) for p in wanted - named_paths(map_block(README)))
    assert missing == [], "name these in the README's map of the package"


def test_every_path_on_the_map_exists():
    gone = sorted(str(p) for p in named_paths(map_block(README)) if not (ROOT / p).exists())
    assert gone == []
