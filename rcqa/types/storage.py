"""Where results are written and read: JSON files, and .npz files (the fields as JSON beside the arrays, what the
result cache stores). Every saved result names its kind ("attribution", "comparison", "answer_lens",
"interventions"); load_result reads any of them back as the type that registered the kind. A file without a kind
was written before kinds were recorded, by Attribution.save, `explain --json` or the result cache: an attribution.
A file that reads as none of them is refused with one sentence naming what it seems to be.
"""
from __future__ import annotations

import io
import json
import math
import zipfile
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
    # numpy's stub reads a ** mapping as if it could hold allow_pickle; these keys are array names
    np.savez_compressed(buffer, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                        **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def read_npz(file, bounded: Mapping[str, float] = {}) -> tuple[dict, dict[str, np.ndarray]]:
    """(meta, arrays) of a file npz_bytes wrote (a path or an open binary file); an array named in `bounded` is
    left out unread when it holds more bytes than its bound."""
    with np.load(file, allow_pickle=False) as stored:
        meta = json.loads(stored["meta"].tobytes().decode())
        arrays = {name: stored[name] for name in stored.files if name != "meta"
                  and stored.zip.getinfo(f"{name}.npy").file_size <= bounded.get(name, math.inf)}
    return meta, arrays


def save(result: Any, path: str | Path, **options) -> Path:
    """Write a result as .json (its kind and fields; `options` go to its stored_dict) or, for a result that has one,
    its .npz form."""
    path = Path(path)
    if path.suffix == ".json":
        path.write_text(stored_json(result, **options), encoding="utf-8")
    elif path.suffix == ".npz" and hasattr(result, "to_npz"):
        path.write_bytes(result.to_npz())
    else:
        kinds = ".json or .npz" if hasattr(result, "to_npz") else ".json"
        raise ValueError(f"save a {type(result).__name__} as {kinds}, not {path.name!r}")
    return path


def stored_json(result: Any, **options) -> str:
    """The JSON save writes and the commands' --json write: the result's kind and what its from_dict reads."""
    return json.dumps({"kind": result.kind, **result.stored_dict(**options)}, ensure_ascii=False)


LOADABLE = ("a result's save, the result cache, or `rcqa explain --json`, `rcqa lens --json` or "
            "`rcqa intervene --json`")
_LOOKS_LIKE = (  # keys only one command's JSON has, and what that file is
    ({"readers", "final_answer"}, "an answer lens from before `rcqa lens --json` recorded its kind (run it again)"),
    ({"explained_span", "unchanged"},
     "interventions from before `rcqa intervene --json` recorded their kind (run it again)"),
    ({"methods", "random"}, "a methods comparison report (`rcqa faithfulness --json`), which is not a result"),
)


def load_result(path: str | Path) -> Any:
    """The result a file holds: an .npz the result cache or Attribution.save wrote, or a .json any result's save
    (or `rcqa explain`, `lens` or `intervene --json`) wrote, read by the type its kind names. ValueError, in one
    sentence naming what the file seems to be, for a file that holds none."""
    path = Path(path)
    try:
        if path.suffix == ".npz":
            return result_type(OLDEST_KIND).from_npz(path)
        data = json.loads(path.read_text(encoding="utf-8"))
        kind = data.pop("kind", OLDEST_KIND) if isinstance(data, dict) else None
        return result_type(kind if isinstance(kind, str) else "").from_dict(data)
    except (KeyError, TypeError, AttributeError, ValueError, zipfile.BadZipFile):  # its fields are not a result's
        raise ValueError(f"{path.name[:80]} is not a result rcqa can load: it seems to be {_seems(path)}; results "
                         f"that load are written by {LOADABLE}.") from None


def _seems(path: Path) -> str:
    """What a file load_result could not read seems to be, in a few words."""
    if path.suffix == ".npz":
        return "an .npz file that the result cache did not write"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return "no JSON at all"
    if not isinstance(data, dict):
        return f"JSON that holds a {type(data).__name__}, not an object"
    kind = data.get("kind")
    if isinstance(kind, str):
        return (f"a result of kind {kind!r} whose fields are missing or damaged" if kind in _kinds else
                f"a result of unknown result kind {kind[:40]!r}, which this version does not read")
    for keys, what in _LOOKS_LIKE:
        if keys <= data.keys():
            return what
    return "JSON of another kind (it lacks a result's fields)"
