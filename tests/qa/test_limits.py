"""What one long paste may cost: its size is checked before anything reads it, the answer lens holds one batch of
states at a time, and the written-words memo is bounded by the bytes it holds, not by how many texts."""
import weakref

import pytest

import rcqa.lens.readout as readout
from rcqa.lens import read_layers
from rcqa.memo import memoize_by_size
from rcqa.model import load_model
from rcqa.qa import InputError, answer, validate
from rcqa.text import held_bytes, written_words
from rcqa.types import Example


class ReadCounted(str):
    """A pasted text that counts the times it is read through, character by character or split into words."""
    reads = 0

    def __iter__(self):
        ReadCounted.reads += 1
        return super().__iter__()

    def split(self, *args, **kwargs):
        ReadCounted.reads += 1
        return super().split(*args, **kwargs)


@pytest.mark.parametrize("passage, question, message", [
    (ReadCounted("\x01" * 10_000_000), "Who?", "the passage has 10,000,000 characters; the limit is 100,000"),
    ("The tower was built in 1872.", ReadCounted("why " * 600),
     "the question has 2,400 characters; the limit is 2,000"),
])
def test_an_oversize_paste_is_refused_before_it_is_read(monkeypatch, passage, question, message):
    """A 10 MB paste spent 6 s in the binary check's character loop before its length was looked at."""
    monkeypatch.setattr("rcqa.qa.written_words", lambda text: pytest.fail("the passage was tagged"))
    ReadCounted.reads = 0
    with pytest.raises(InputError, match=message):
        validate(passage, question)
    assert ReadCounted.reads == 0  # the oversize text was not read through


def test_the_lens_keeps_one_batch_of_states_at_a_time(monkeypatch, tiny_model_dirs):
    alive, most = weakref.WeakSet(), []

    class CountedStack(readout.LayerStack):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            alive.add(self)
            most.append(len(alive))

    monkeypatch.setattr(readout, "LayerStack", CountedStack)
    monkeypatch.setattr(readout, "WINDOW_BATCH", 1)
    qa_model = load_model(tiny_model_dirs["bert"])
    example = Example(id="long", passage="the bridge cost a lot of money . " * 40, question="what did it cost ?")
    lens = read_layers(qa_model, example)
    assert lens.answer.n_windows >= 3
    assert max(most) == 1  # a batch's stack is gone before the next is built
    assert lens.answer.best == answer(qa_model, example.passage, example.question).best


def test_a_size_bounded_memo_drops_the_least_recently_used_by_bytes():
    calls = []

    @memoize_by_size(100, lambda text, result: len(text))
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    assert upper("a" * 40) == "A" * 40
    upper("b" * 40)
    upper("a" * 40)  # a hit, and now the most recently used
    upper("c" * 40)  # 120 bytes: "b" goes
    assert calls == ["a" * 40, "b" * 40, "c" * 40]
    assert upper.cache_bytes() == 80
    upper("b" * 40)
    assert calls[-1] == "b" * 40
    upper("d" * 101)  # larger than the whole memo: answered, never kept
    assert upper.cache_bytes() <= 100


def test_written_words_are_memoized_by_what_they_hold():
    written_words.cache_clear()
    texts = ["The bridge cost a lot.", "It was opened in 1932 by the mayor of the town."]
    held = sum(held_bytes(text, written_words(text)) for text in texts)
    written_words(texts[0])
    assert written_words.cache_bytes() == held
