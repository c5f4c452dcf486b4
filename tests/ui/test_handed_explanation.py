"""What a page hands the job explaining an example (issue 43: once per click): its result cache key and its reading
of the example (the answer and the logits it was decoded from). The job takes them instead of working them out
again, and its result is the one computed without them; a job handed nothing (the CLI's road) or a reading that
does not fit works them out itself."""
import dataclasses

import numpy as np
import pytest

import rcqa.attribution.window
from rcqa import qa
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings, FoilSpec
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.ui import worker

SETTINGS = ExplainSettings(steps=4, tolerance=None)


def recorded(monkeypatch, owner, name: str) -> list:
    """The calls of owner.name from now on, each as its positional arguments."""
    calls: list = []
    original = getattr(owner, name)

    def recording(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, staticmethod(recording) if isinstance(owner, type) else recording)
    return calls


def job(qa_model, cache: ResultCache, request: worker.ExplanationRequest):
    """The dashboard's explanation job, run here: (result, came from the cache)."""
    result, hit, _ = worker.explanation(qa_model, request, cache, report=lambda _: None)
    return result, hit


def assert_same(result, expected) -> None:
    assert result.answer == expected.answer and result.targets == expected.targets
    assert result.window == expected.window and result.tokens == expected.tokens
    np.testing.assert_allclose(result.scores, expected.scores, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("example_id, settings", [
    ("comet-who", SETTINGS),
    ("comet-who", dataclasses.replace(SETTINGS, contrast=FoilSpec.parse("nbest:1"))),  # the foil read off the logits
    ("canal-long", dataclasses.replace(SETTINGS, windows="all", steps=2)),  # every window, from the handed logits
])
def test_a_handed_key_and_reading_are_taken_and_the_result_is_the_one_computed_without(
        tiny_bert, tmp_path, monkeypatch, example_id, settings):
    example = gallery_example(example_id)
    expected = explain(tiny_bert, example, settings)
    key = ResultCache.key(tiny_bert.fingerprint, example, settings)
    reading = qa.read(tiny_bert, example.passage, example.question)
    keys = recorded(monkeypatch, ResultCache, "key")
    answers = recorded(monkeypatch, rcqa.attribution.window, "answer_with_logits")
    forwards = recorded(monkeypatch, qa, "logits")
    cache = ResultCache(tmp_path)
    result, hit = job(tiny_bert, cache, worker.ExplanationRequest(example, settings, key, reading))
    assert (keys, answers, forwards, hit) == ([], [], [], False)
    assert_same(result, expected)
    assert_same(cache.get(key), expected)  # kept under the key it was handed


def test_a_job_handed_nothing_keys_and_answers_the_example_itself_once(tiny_bert, tmp_path, monkeypatch):
    example = gallery_example("comet-who")
    expected = explain(tiny_bert, example, SETTINGS)
    keys = recorded(monkeypatch, ResultCache, "key")
    answers = recorded(monkeypatch, rcqa.attribution.window, "answer_with_logits")
    cache = ResultCache(tmp_path)
    result, hit = job(tiny_bert, cache, worker.ExplanationRequest(example, SETTINGS))
    assert (len(keys), len(answers), hit) == (1, 1, False)
    assert_same(result, expected)
    assert_same(cache.get(ResultCache.key(tiny_bert.fingerprint, example, SETTINGS)), expected)


def test_a_reading_of_another_text_is_not_taken(tiny_bert, tmp_path, monkeypatch):
    example, other = gallery_example("comet-who"), gallery_example("bakery-where")
    expected = explain(tiny_bert, example, SETTINGS)
    stale = [qa.read(tiny_bert, other.passage, example.question), qa.read(tiny_bert, example.passage, other.question)]
    answers = recorded(monkeypatch, rcqa.attribution.window, "answer_with_logits")
    for reading in stale:
        result, _ = job(tiny_bert, ResultCache(tmp_path / str(len(answers))),
                        worker.ExplanationRequest(example, SETTINGS, reading=reading))
        assert_same(result, expected)
    assert len(answers) == len(stale)


def test_a_reading_decoded_otherwise_than_the_settings_ask_is_not_taken(abstaining_tiny_dir, tmp_path, monkeypatch):
    abstaining = load_model(abstaining_tiny_dir)
    example = gallery_example("comet-who")
    reading = qa.read(abstaining, example.passage, example.question)  # "no answer" allowed, as its card says
    assert reading.answer.settings.allow_null
    spans_only = dataclasses.replace(SETTINGS, allow_null=False)
    expected = explain(abstaining, example, spans_only)
    answers = recorded(monkeypatch, rcqa.attribution.window, "answer_with_logits")
    result, _ = job(abstaining, ResultCache(tmp_path), worker.ExplanationRequest(example, spans_only, reading=reading))
    assert len(answers) == 1 and not result.answer.settings.allow_null
    assert_same(result, expected)


def test_a_reading_by_another_model_is_not_taken(tiny_bert, abstaining_tiny_dir, tmp_path, monkeypatch):
    """The same text read by another model (a server whose model changed under the same name) is read again."""
    example = gallery_example("comet-who")
    other = load_model(abstaining_tiny_dir)
    reading = dataclasses.replace(qa.read(other, example.passage, example.question),
                                  answer=qa.read(tiny_bert, example.passage, example.question).answer)
    expected = explain(tiny_bert, example, SETTINGS)
    answers = recorded(monkeypatch, rcqa.attribution.window, "answer_with_logits")
    result, _ = job(tiny_bert, ResultCache(tmp_path), worker.ExplanationRequest(example, SETTINGS, reading=reading))
    assert len(answers) == 1
    assert_same(result, expected)
