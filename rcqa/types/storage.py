"""Where results are written and read: JSON files, and .npz files (the fields as JSON beside the arrays, what the
result cache stores). Every saved result names its kind ("attribution", "comparison", "answer_lens",
"interventions"); load_result reads any of them back as the type that registered the kind. A file without a kind
was written before kinds were recorded, by Attribution.save, `explain --json` or the result cache: an attribution.
"""
from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

OLDEST_KIND = "attribution"  # the kind of a file that names none
_kinds: dict[str, Any] = {}  # kind -> the result type that reads it (ResultHeader subclasses register themselves)


def register_kind(kind: str, result_type: Any) -> None:
    _kinds[kind] = result_type


def result_type(kind: str) -> Any:
    """The result type that reads a kind; ValueError, in one sentence, for a kind no loaded module registered."""
    if kind not in _kinds:
        raise ValueError(f"unknown result kind {kind[:40]!r}; rcqa.load_result reads {', '.join(sorted(_kinds))}")
    return _kinds[kind]


def npz_bytes(meta: dict, arrays: Mapping[str, np.ndarray]) -> bytes:
    """An .npz file: meta as UTF-8 JSON (an array of bytes) beside the arrays, compressed (a result's words' JSON
    shrinks fivefold, and runs keep thousands of results)."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
    return buffer.getvalue()


def read_npz(file, bounded: Mapping[str, float] = {}) -> tuple[dict, dict[str, np.ndarray]]:
    """(meta, arrays) of a file npz_bytes wrote (a path or an open binary file); an array named in `bounded` is
    left out unread when it holds more bytes than its bound."""
    with np.load(file, allow_pickle=False) as stored:
        meta = json.loads(stored["meta"].tobytes().decode())
        arrays = {name: stored[name] for name in stored.files if name != "meta"
                  and stored.zip.getinfo(f"{name}.npy").file_size <= bounded.get(name, math.inf)}
    return meta, arrays


def save(result: Any, path: str | Path) -> Path:
    """Write a result as .json (its kind and fields) or, for a result that has one, its .npz form."""
    path = Path(path)
    if path.suffix == ".json":
        path.write_text(json.dumps({"kind": result.kind, **result.stored_dict()}, ensure_ascii=False),
                        encoding="utf-8")
    elif path.suffix == ".npz" and hasattr(result, "to_npz"):
        path.write_bytes(result.to_npz())
    else:
        kinds = ".json or .npz" if hasattr(result, "to_npz") else ".json"
        raise ValueError(f"save a {type(result).__name__} as {kinds}, not {path.name!r}")
    return path


def load_result(path: str | Path) -> Any:
    """The result a file holds: an .npz the result cache or Attribution.save wrote, or a .json any result's save
    (or `rcqa explain --json`) wrote, read by the type its kind names."""
    path = Path(path)
    if path.suffix == ".npz":
        return result_type(OLDEST_KIND).from_npz(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    kind = data.pop("kind", OLDEST_KIND)
    return result_type(kind if isinstance(kind, str) else "").from_dict(data)
