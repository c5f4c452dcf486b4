"""What an uploaded file's questions hold in the server once read (they stay in the visitor's session), against the
file's size: SQuAD v1.1 dev and files built to hold the most per byte within the upload limits.

    python -m benchmarks.measure_uploads [PART OF A FILE'S NAME ...]

Each file is read as the app reads it (rcqa.uploads.read_examples: parsed in a child process, unpickled here);
tracemalloc counts what the examples hold here. Prints one JSON line per file.
"""
from __future__ import annotations

import json
import sys
import time
import tracemalloc

from rcqa.resources import squad_file
from rcqa.uploads import read_examples

UPLOAD_BYTES = 8 * 2**20  # .streamlit/config.toml's server.maxUploadSize


def _squad(questions: list[dict]) -> dict:
    return {"data": [{"title": "t", "paragraphs": [{"context": "c" * 50, "qas": questions}]}]}


def crafted() -> dict[str, bytes]:
    """Files of few bytes per object the reader makes: a question, an answer."""
    documents = {
        "199,999 one-letter questions (SQuAD)": _squad([{"question": "q"}] * 199_999),
        "115,000 questions with ids (SQuAD)": _squad([{"question": f"question number {i:08d} ok", "id": f"{i:016x}"}
                                                      for i in range(115_000)]),
        "8,000 questions of 32 answers (SQuAD)": _squad([{"question": "q", "answers": [{"text": "c",
                                                                                     "answer_start": 0}] * 32}] * 8000),
        "48,000 questions of 32 one-letter answers (DuoRC)": [{"plot": "p", "qa": [{"question": "q",
                                                                                    "answers": ["p"] * 32}] * 12_000}
                                                               for _ in range(4)],
        "25,000 questions of 32 distinct answers (DuoRC)": [{"plot": "p", "qa": [
            {"question": "q", "answers": [f"{n:x}" for n in range(q * 32, q * 32 + 32)]} for q in range(25_000)]}],
    }
    return {name: json.dumps(document, separators=(",", ":")).encode() for name, document in documents.items()}


def measure(name: str, raw: bytes) -> dict:
    assert len(raw) <= UPLOAD_BYTES, name
    tracemalloc.start()
    started = time.perf_counter()
    examples = read_examples(raw, seconds=600)  # this measures memory: a loaded machine may read slowly
    seconds = time.perf_counter() - started
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"file": name, "file_mb": round(len(raw) / 2**20, 2), "questions": len(examples),
            "held_mb": round(held / 2**20, 1), "times_the_file": round(held / len(raw), 1),
            "read_seconds": round(seconds, 1)}


def main(only: list[str]) -> None:
    """Every file, or those whose name holds one of `only`."""
    files = {"SQuAD v1.1 dev": squad_file("dev").read_bytes(), **crafted()}
    for name, raw in files.items():
        if only and not any(part in name for part in only):
            continue
        print(json.dumps(measure(name, raw)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
