"""Once per click (issue 43): what the page works out for an explanation, its result cache key, its price and the
example's answer, is handed to the job, which neither keys nor answers it again; the tokenising a price needs is
done once per text."""
import threading
from collections import Counter

import numpy as np
import pytest

import rcqa.attribution.window
import rcqa.qa
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.ui import queue as ui_queue
from rcqa.ui.results import answers, explanations, prices
from tests.helpers.app_harness import open_app, press

pytestmark = pytest.mark.usefixtures("app_env")
EXAMPLE = gallery_example("orchard-how-many")
QUERY = {"ex": EXAMPLE.id, "steps": "5", "tol": "off"}  # fixed steps: a result no other test leaves behind


def where(calls: Counter, what: str):
    """A recorder of one call of `what`: in a job (a queue's thread) or in the page."""
    def record():
        calls[what, "job" if threading.current_thread().name.startswith("rcqa-job") else "page"] += 1
    return record


def counting(monkeypatch, calls: Counter) -> None:
    """Count, by where they run, the calls about EXAMPLE: its cache keys, its answers (every read of the
    passage's windows through answer_with_logits), the forwards over its windows, its tokenising, and the
    explanation's prices (the only explanation on the page)."""
    def wrapped(function, what, about):
        record = where(calls, what)

        def recorded(*args, **kwargs):
            if about(*args):
                record()
            return function(*args, **kwargs)
        return recorded

    key, answered, encode, logits = (ResultCache.key, rcqa.qa.answer_with_logits, rcqa.qa.encode, rcqa.qa.logits)
    monkeypatch.setattr(prices, "explanation_price", wrapped(prices.explanation_price, "price", lambda *_: True))
    monkeypatch.setattr(ResultCache, "key", staticmethod(
        wrapped(key, "key", lambda fingerprint, example, settings: example.question == EXAMPLE.question)))
    is_ours = lambda qa_model, passage, question, *rest: question == EXAMPLE.question  # noqa: E731
    for owner in (rcqa.qa, rcqa.attribution.window):
        monkeypatch.setattr(owner, "answer_with_logits", wrapped(answered, "answer", is_ours))
    for owner in (rcqa.qa, rcqa.attribution.window):
        monkeypatch.setattr(owner, "encode", wrapped(
            encode, "tokenise", lambda qa_model, question, passage: question == EXAMPLE.question))
    monkeypatch.setattr(rcqa.qa, "logits", wrapped(
        logits, "forward", lambda qa_model, windows, *rest: windows.question == EXAMPLE.question))


@pytest.fixture
def in_this_process(monkeypatch):
    """Jobs run in the queue's threads, where the counters see them, and the page's answers are read afresh."""
    monkeypatch.setattr(ui_queue, "worker_processes", lambda: None)
    answers._reading.clear()
    answers._window_lengths.clear()
    explanations._result_key.cache_clear()


def test_one_click_keys_prices_and_answers_the_example_once(monkeypatch, in_this_process, tiny_model_dirs):
    calls: Counter = Counter()
    counting(monkeypatch, calls)
    app = open_app(query=QUERY)
    opened = Counter(calls)
    # the page read the example once (its windows counted for whether to answer here and for the price, then the
    # answer's own tokenising and forward), and keyed it once, however many places asked (before: 5 tokenisings,
    # 2 keys)
    assert opened == {("tokenise", "page"): 2, ("answer", "page"): 1, ("forward", "page"): 1, ("key", "page"): 1,
                      ("price", "page"): 1}
    press(app, "rcqa.explain")
    # the click's run priced the explanation once and tokenised and keyed nothing again, and the job took the key
    # and the answer it was handed: it cut the windows once, for the explained window's inputs (before: the page
    # priced twice, tokenised 5 more times and keyed 4; the job keyed it and answered it again, with its forward)
    assert calls - opened == {("price", "page"): 1, ("tokenise", "job"): 1}
    key, result = app.session_state["rcqa.result"]
    expected = explain(load_model(tiny_model_dirs["bert"]), EXAMPLE, result.settings)
    assert key == ResultCache.key(expected.fingerprint, EXAMPLE, expected.settings)
    assert result.answer == expected.answer and result.tokens == expected.tokens
    np.testing.assert_allclose(result.scores, expected.scores, rtol=1e-5, atol=1e-7)
