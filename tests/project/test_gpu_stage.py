"""The GPU bundle's stand-ins for spaCy and lemminflect (scripts/gpu_stage/): kept in the checkout as text, written
by write_stubs.py into the bundle as packages where run.sh puts them on PYTHONPATH, and importable from there ahead
of the real ones, so that the bundle's copy of rcqa reads words with them."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STAGE = ROOT / "scripts" / "gpu_stage"
WRITE = "python scripts/gpu_stage/write_stubs.py .gpu/stubs"  # assemble.sh's line, run from the checkout's root


def test_assemble_writes_the_stubs_where_run_reads_them():
    assert WRITE in (STAGE / "assemble.sh").read_text()
    # run.sh runs from .gpu/repo with HERE=.gpu: the stand-ins come first on the path, then the bundle's code
    assert 'PYTHONPATH="$HERE/stubs:$PWD"' in (STAGE / "run.sh").read_text()


def packed(tmp_path: Path) -> Path:
    """The stand-ins packed as assemble.sh packs them, into tmp_path/.gpu/stubs."""
    command = WRITE.split()
    command[0] = sys.executable
    command[-1] = str(tmp_path / ".gpu" / "stubs")
    subprocess.run(command, cwd=ROOT, check=True, timeout=60)
    return tmp_path / ".gpu" / "stubs"


def test_the_stubs_land_as_the_packages_the_library_imports(tmp_path):
    stubs = packed(tmp_path)
    files = {p.relative_to(stubs).as_posix() for p in stubs.rglob("*") if p.is_file()}
    assert files == {"spacy/__init__.py", "spacy/util.py", "spacy/lang/__init__.py", "spacy/lang/en/__init__.py",
                     "spacy/lang/en/stop_words.py", "lemminflect.py"}


# Run on the bundle's path: what each name was imported from, and the library's words of a sentence read with the
# stand-in (rcqa from the checkout: the bundle's repo/rcqa is a copy of it).
PROBE = """
import json, sys
import spacy, spacy.util, lemminflect
from spacy.lang.en.stop_words import STOP_WORDS
import rcqa.negatives
from rcqa.text import written_words
try:
    lemminflect.getLemma("went", upos="VERB")
    lemma = "returned"
except RuntimeError as error:
    lemma = str(error)
print(json.dumps({
    "files": [spacy.__file__, spacy.util.__file__, lemminflect.__file__, sys.modules["spacy.lang.en.stop_words"].__file__],
    "stop_words": len(STOP_WORDS),
    "lemma": lemma,
    "words": [[w.text, w.start_char, w.end_char] for w in written_words("Eiffel's tower, built in 1889.")],
}))
"""


def test_importing_the_stubs_from_the_packed_bundle_works(tmp_path):
    stubs = packed(tmp_path)
    env = {**os.environ, "PYTHONPATH": f"{stubs}{os.pathsep}{ROOT}"}  # as run.sh sets it
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert all(Path(f).is_relative_to(stubs) for f in found["files"]), found["files"]  # not the installed spaCy
    assert found["stop_words"] == 0
    assert found["lemma"] == "lemminflect is not on this machine"
    # split at spaces and punctuation, by hand: E-i-f-f-e-l at 0-6, ' at 6, s at 7, tower at 9-14, "," at 14 ...
    assert found["words"] == [["Eiffel", 0, 6], ["'", 6, 7], ["s", 7, 8], ["tower", 9, 14], [",", 14, 15],
                              ["built", 16, 21], ["in", 22, 24], ["1889", 25, 29], [".", 29, 30]]
