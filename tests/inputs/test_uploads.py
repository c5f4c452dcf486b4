"""Uploads read in a process of their own (rcqa.uploads): the same examples and the same one-sentence errors as
reading in-process, a time limit that kills the reader, and a reader that imports neither streamlit nor torch."""
import json
import subprocess
import time

import psutil
import pytest

from rcqa import uploads
from rcqa.data import DataError, load_examples
from rcqa.uploads import read_examples
from tests.helpers.squad_files import SQUAD, duorc, squad_with


def readers() -> list[psutil.Process]:
    """This process's upload readers still alive (or not yet reaped)."""
    return [p for p in psutil.Process().children(recursive=True) if "rcqa.uploads" in " ".join(p.cmdline())]


def many_questions(count: int) -> bytes:
    qas = [{"id": f"q{n}", "question": f"When did bridge {n} open?", "answers": [{"text": "1935",
                                                                                "answer_start": 21}]}
           for n in range(count)]
    return json.dumps({"data": [{"title": "Bridges", "paragraphs": [
        {"context": "The bridge opened in 1935.", "qas": qas}]}]}).encode()


@pytest.mark.parametrize("raw", [
    json.dumps(SQUAD).encode(),
    "\ufeff".encode() + many_questions(300),  # a byte-order mark, and paragraphs' contexts shared by questions
    duorc("The bridge opened in 1935; the tunnel, later.", ["1935", "the tunnel", "a ferry"], questions=3),
])
def test_a_file_read_apart_gives_the_examples_read_in_process(raw):
    examples = read_examples(raw)
    assert examples == load_examples(raw) and len(examples) >= 1
    assert not readers()


@pytest.mark.parametrize("raw, message", [
    (b"[" * 1000 + b"]" * 1000, "nested too deeply"),  # a RecursionError in the child's JSON parser
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe\x00binary", "not UTF-8 text"),
    (squad_with([{"text": "1935", "answer_start": 21}] * 33), "33 answers; the limit is 32"),
    (b'{"data": 3}', "must be a list of articles"),
])
def test_an_error_in_the_reader_is_the_sentence_reading_in_process_gives(raw, message):
    with pytest.raises(DataError, match=message) as in_process:
        load_examples(raw)
    with pytest.raises(DataError) as apart:
        read_examples(raw)
    assert str(apart.value) == str(in_process.value)
    assert not readers()


def test_a_file_that_reads_past_the_limit_is_refused_and_its_reader_killed():
    raw = many_questions(40_000)  # 2.7 MB: about 1.5 s to read on this machine, 0.3 s of it the child's imports
    started = time.monotonic()
    with pytest.raises(DataError, match=r"^this file took longer than 0.5 s to read; split it"):
        read_examples(raw, seconds=0.5)
    assert time.monotonic() - started < 1.5  # killed, not waited for
    assert not readers()
    assert len(read_examples(json.dumps(SQUAD).encode())) == 1  # the next file reads as ever


def test_a_file_that_needs_more_memory_than_the_limit_is_one_sentence(monkeypatch):
    monkeypatch.setenv("RCQA_UPLOAD_MEMORY_MB", "160")  # the reader itself takes about 100 MB of address space
    assert len(read_examples(json.dumps(SQUAD).encode())) == 1  # a small file reads within it
    raw = json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": [{"question": "q"}] * 150_000}]}]}).encode()
    with pytest.raises(DataError, match=r"^reading it needs more than the 160 MB of memory this server gives one "
                                        r"file; split it into smaller files$"):
        read_examples(raw, seconds=120)  # before: read whole, however much memory it took
    assert not readers()


def test_a_reader_that_dies_is_one_sentence(monkeypatch):
    monkeypatch.setattr(uploads, "_CHILD", [*uploads._CHILD[:2], "import os; os._exit(9)"])
    with pytest.raises(DataError, match="its process ended early"):
        read_examples(json.dumps(SQUAD).encode())


def test_while_every_reader_is_busy_a_file_waits_its_limit_then_hears_so():
    for _ in range(uploads.MAX_READERS):
        uploads._READERS.acquire()
    try:
        with pytest.raises(DataError, match="busy reading other files for 0.2 s"):
            read_examples(json.dumps(SQUAD).encode(), seconds=0.2)
    finally:
        for _ in range(uploads.MAX_READERS):
            uploads._READERS.release()


def test_the_reader_imports_neither_streamlit_nor_torch():
    report = "; import sys; sys.stderr.write(repr(sorted({'streamlit', 'torch', 'spacy'} & set(sys.modules))))"
    command = [*uploads._CHILD[:2], uploads._CHILD[2] + report]
    done = subprocess.run(command, input=json.dumps(SQUAD).encode(), capture_output=True, timeout=60,
                          env={**uploads.os.environ, "PYTHONPATH": uploads._ROOT}, check=True)
    assert done.stderr.decode() == "[]"
    assert done.stdout  # it answered
