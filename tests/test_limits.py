"""What one long paste may cost: the answer lens holds one batch of states at a time, and the written-words memo is
bounded by the bytes it holds, not by how many texts."""
import weakref

import pytest

import rcqa.lens.readout as readout
from rcqa.lens import read_layers
from rcqa.memo import memoize_by_size
from rcqa.model import load_model
from rcqa.qa import answer
from rcqa.text import held_bytes, written_words
from rcqa.types import Example


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
