"""Which models this process may load, and under which name one model is known.

On a researcher's own machine any folder or hub id may be loaded. A served dashboard sets RCQA_PUBLIC=1: then only
the catalog loads: the embedded models ("default", and "default-squad2", which can abstain), the dashboard's
RCQA_MODEL and RCQA_MODELS (names, model folders, or folders of model folders, separated by the path separator),
and its folders are shown by their names, never by their paths on the server (shown_name). The hub is reached only
when RCQA_HUB=1 opts in; otherwise a hub id loads from the local cache alone. Names are canonical ("./x", "x/" and
"x//y" are one folder), so that one model is one cache entry.
"""
from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Sequence
from pathlib import Path

from rcqa.resources import EMBEDDED_MODEL_DIRS

DEFAULT_MODEL = "default"
SQUAD2_MODEL = "default-squad2"
EMBEDDED_MODELS = tuple(EMBEDDED_MODEL_DIRS)  # loaded by name, from the package's own folders
PUBLIC_ENV, MODELS_ENV, HUB_ENV = "RCQA_PUBLIC", "RCQA_MODELS", "RCQA_HUB"
APP_MODEL_ENV = "RCQA_MODEL"  # the dashboard's own default model, offered as well
MAX_NAME = 1024  # characters of a model name: a hub id has at most 96, a folder's path rarely a few hundred


def _flag(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() not in ("", "0", "false", "no")


def public_mode() -> bool:
    """Free-form loading is off: only the catalog's models load."""
    return _flag(PUBLIC_ENV)


def hub_allowed() -> bool:
    """The operator opted in to downloads from the model hub."""
    return _flag(HUB_ENV)


def canonical(name: str) -> str:
    """The one name of a model: an embedded model's name, a folder's absolute path, or a hub id without stray
    slashes; ValueError, in one sentence, for a name longer than MAX_NAME characters."""
    name = (name or DEFAULT_MODEL).strip()
    if len(name) > MAX_NAME:
        raise ValueError(f"a model name has at most {MAX_NAME:,} characters; this one has {len(name):,}")
    if name in EMBEDDED_MODELS:
        return name
    try:
        path = Path(name).expanduser()
    except RuntimeError:  # "~user" of a user this machine does not have
        raise ValueError(f"{name.split('/')[0]} names the home folder of a user this machine does not have") from None
    if name.startswith((".", "/", "~")) or path_exists(path):
        return str(path.resolve())
    return "/".join(part for part in name.split("/") if part)


def path_exists(path: Path) -> bool:
    """Whether the path names something; a name the file system cannot hold (a part past 255 bytes) names
    nothing, where Path.exists raises."""
    try:
        return path.exists()
    except OSError:
        return False


def catalog() -> list[str]:
    """The canonical names of the models the operator offers, the embedded ones first."""
    names = list(EMBEDDED_MODELS)
    entries = [os.environ.get(APP_MODEL_ENV, ""), *os.environ.get(MODELS_ENV, "").split(os.pathsep)]
    for entry in filter(None, (e.strip() for e in entries)):
        folder = Path(entry).expanduser()
        if folder.is_dir() and not (folder / "config.json").is_file():  # a folder of model folders
            names += [canonical(str(child)) for child in sorted(folder.iterdir()) if (child / "config.json").is_file()]
        else:
            names.append(canonical(entry))
    return list(dict.fromkeys(names))


def offered(name: str) -> str | None:
    """The catalog's name of the model a visitor (or a link) named: its canonical name, a hub id with stray slashes,
    an absolute path with a trailing one, or, in public mode, the name shown_name shows; None where the catalog has
    no such model. The name is read as text only: a link names one of the catalog's models, it never makes the
    server expand a "~", resolve a relative path or look at its folders."""
    name = (name or "").strip()
    if len(name) > MAX_NAME:
        return None
    entries = catalog()
    spelled = posixpath.normpath(name) if name.startswith("/") else "/".join(p for p in name.split("/") if p)
    if spelled in entries:
        return spelled
    if not public_mode():
        return None
    return next((entry for entry in entries if _shown_among(entry, entries) == name), None)


def in_catalog(name: str) -> bool:
    return offered(name) is not None


def shown_name(name: str) -> str:
    """A model's name as visitors see it: in public mode a folder is named by its last parts, as few as tell it from
    the catalog's other folders (/srv/models/squad-large: squad-large), never by its path on the server; the name
    itself otherwise."""
    return _shown_among(name, catalog()) if public_mode() else name


def _shown_among(name: str, entries: Sequence[str]) -> str:
    """shown_name in public mode, against the catalog's `entries`: read by the caller, each time (a folder of model
    folders may gain one while the server runs), and once for all of its names (offered)."""
    if not Path(name).is_absolute():
        return name
    return _short_name(name, tuple(entry for entry in entries if Path(entry).is_absolute()))


@functools.lru_cache(maxsize=256)
def _short_name(name: str, folders: tuple[str, ...]) -> str:
    """The last parts of the folder `name`, as few as tell it from the other `folders`: a function of its
    arguments alone (no file system), so kept."""
    path = Path(name)
    others = [Path(entry).parts for entry in folders if Path(entry) != path]
    parts = path.parts[1:]  # without the root
    depth = next((depth for depth in range(1, len(parts)) if all(o[-depth:] != parts[-depth:] for o in others)),
                 len(parts))
    return "/".join(parts[-depth:])


def may_load(name: str) -> bool:
    """Whether this process may load the model: any model, unless in public mode."""
    return not public_mode() or in_catalog(name)
