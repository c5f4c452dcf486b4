"""Read an uploaded SQuAD / DuoRC file in a process of its own, killed after a time limit.

Parsing is pure Python: in the server's process it would hold the interpreter lock that every page script and the
websocket loop need, for as long as a crafted file makes it last. A child process has an interpreter of its own,
and it is killed when it runs past the limit, so a file costs the server at most that much time of one core; its
address space is capped too ($RCQA_UPLOAD_MEMORY_MB), so a file costs at most that much memory.

The child is a plain `python -c` that imports rcqa.data alone (no streamlit, no torch: about 0.3 s), not a
multiprocessing `spawn` child, which would first run the server's main script (Streamlit's app) again in it.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import traceback
from pathlib import Path

from rcqa.data import DataError, load_examples
from rcqa.types import Example

READ_SECONDS = 20.0  # SQuAD v1.1 dev (4.9 MB) reads in about 0.5 s; a crafted DuoRC file within the limits in ~5 s
MAX_READERS = 2  # files read at once by one server; the others wait their turn, within their own time limit
CHILD_NICENESS = 10  # pages come first: the child's wait is bounded, theirs is not
MEMORY_ENV = "RCQA_UPLOAD_MEMORY_MB"
# the child's address space: itself 100 MB, reading SQuAD v1.1 dev 140 MB, the hungriest 8 MB file built (48,000
# DuoRC questions of 32 one-letter answers) 560 MB
MEMORY_MB = 1024
_READERS = threading.BoundedSemaphore(MAX_READERS)
_CHILD = [sys.executable, "-c", "from rcqa.uploads import serve; serve()"]
_ROOT = str(Path(__file__).resolve().parent.parent)  # the child imports the rcqa this process imported


def read_examples(raw: bytes, seconds: float = READ_SECONDS) -> list[Example]:
    """load_examples of a file's bytes, computed in a child process; DataError, in one sentence, for a file that
    cannot be read, or that takes longer than `seconds` to read (the child is then killed)."""
    if not _READERS.acquire(timeout=seconds):
        raise DataError(f"the server was busy reading other files for {seconds:g} s; try again in a moment")
    try:
        kind, value = pickle.loads(_run_child(raw, seconds))
    finally:
        _READERS.release()
    if kind == "error":
        raise DataError(value)
    return value


def _run_child(raw: bytes, seconds: float) -> bytes:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_ROOT, os.environ.get("PYTHONPATH")])),
                   # no BLAS threads: the child computes nothing with numpy, and each thread reserves address space
                   "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with subprocess.Popen(_CHILD, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment) as child:
        try:
            output, _ = child.communicate(raw, timeout=seconds)
        except subprocess.TimeoutExpired:
            raise DataError(f"this file took longer than {seconds:g} s to read; split it into smaller files, or "
                            "read it with `python -m rcqa` on your own machine") from None
        finally:
            child.kill()  # past the limit, or any error here; a child that has exited is not signalled again
    if child.returncode != 0 or not output:
        raise DataError("reading it stopped: its process ended early (out of memory?); split it into smaller files")
    return output


def memory_mb() -> int:
    """The address space one file's reader may use, in MB ($RCQA_UPLOAD_MEMORY_MB, default MEMORY_MB)."""
    text = os.environ.get(MEMORY_ENV, "").strip() or str(MEMORY_MB)
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"${MEMORY_ENV} must be a whole number of MB, not {text[:20]!r}")
    return int(text)


def _limit_memory(megabytes: int) -> None:
    """Cap this process's address space: an allocation past it is a MemoryError here, not the machine's memory."""
    try:
        import resource
    except ImportError:  # Windows: no limit
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = megabytes * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard),) * 2)


def serve() -> None:
    """The child: the file's bytes on stdin, a pickled ("examples", list) or ("error", sentence) on stdout."""
    if hasattr(os, "nice"):  # not on Windows
        os.nice(CHILD_NICENESS)
    megabytes = memory_mb()
    _limit_memory(megabytes)
    try:
        output = _pickled(("examples", load_examples(sys.stdin.buffer.read())))
    except DataError as error:
        output = _pickled(("error", str(error)))
    except MemoryError:  # the examples are let go by now: the sentence has room
        output = _pickled(("error", f"reading it needs more than the {megabytes:,} MB of memory this server gives "
                                    "one file; split it into smaller files"))
    except Exception as error:  # anything else: one sentence to the visitor, the traceback to the server's log
        traceback.print_exc()
        output = _pickled(("error", f"it could not be read as a SQuAD or DuoRC file ({type(error).__name__})"))
    sys.stdout.buffer.write(output)


def _pickled(answer: tuple) -> bytes:
    return pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
