"""One loaded model shared by many threads, as the dashboard shares it between sessions: explanations and
answers computed at the same time equal the same computations run one at a time."""
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pytest
import torch

from rcqa import qa
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from tests.helpers.tiny_models import ARCHITECTURES

# passages and questions of different lengths (cut to fit one window of every tiny model, even byte-level
# RoBERTa's): a stack that replayed another input's attention mask would not fit
EXAMPLES = tuple(replace(gallery_example(name), passage=gallery_example(name).passage[:length], answers=())
                 for name, length in (("lighthouse-who", 15), ("orchard-how-many", 30), ("comet-who", 45),
                                      ("choir-how-many", 60), ("canal-long", 75)))
SETTINGS = ExplainSettings(steps=4, tolerance=None)


@pytest.fixture(autouse=True)
def one_torch_thread():
    """As the app runs (rcqa.ui.capacity.limit_torch_threads): on shared cores, several intra-op threads per forward
    make tiny forwards wait on each other's spinning threads, 50 times slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def max_relative_difference(ours: np.ndarray, reference: np.ndarray) -> float:
    return float(np.abs(ours - reference).max() / max(np.abs(reference).max(), 1e-12))


def all_at_once(jobs: list) -> list:
    """Run every job on its own thread, released together by a barrier so that their forwards overlap."""
    start = threading.Barrier(len(jobs))

    def run(job):
        start.wait()
        return job()

    with ThreadPoolExecutor(len(jobs)) as pool:
        return [future.result() for future in [pool.submit(run, job) for job in jobs]]


def explanation(qa_model, example):
    return lambda: explain(qa_model, example, SETTINGS)


def assert_same_explanation(concurrent, alone) -> None:
    assert concurrent.tokens == alone.tokens
    assert max_relative_difference(concurrent.scores, alone.scores) <= 1e-6
    assert max_relative_difference(concurrent.hidden_states, alone.hidden_states) <= 1e-6


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_explanations_from_many_threads_equal_each_run_alone(tiny_model_dirs, architecture):
    qa_model = load_model(tiny_model_dirs[architecture])
    alone = [explanation(qa_model, e)() for e in EXAMPLES]
    assert len({len(result.tokens) for result in alone}) == len(EXAMPLES)
    concurrent = all_at_once([explanation(qa_model, e) for e in EXAMPLES])
    for together, single in zip(concurrent, alone):
        assert_same_explanation(together, single)


def test_answers_while_explanations_run_equal_answers_alone(tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    explained, answered = EXAMPLES[:3], [e for e in EXAMPLES[1:] for _ in range(3)]
    alone = [qa.answer(qa_model, e.passage, e.question) for e in answered]
    explained_alone = [explanation(qa_model, e)() for e in explained]
    jobs = [explanation(qa_model, e) for e in explained]
    jobs += [lambda e=e: qa.answer(qa_model, e.passage, e.question) for e in answered]
    results = all_at_once(jobs)
    for together, single in zip(results[:len(explained)], explained_alone):
        assert_same_explanation(together, single)
    for together, single in zip(results[len(explained):], alone):
        assert [s.text for s in together.nbest] == [s.text for s in single.nbest]
        assert np.allclose([s.score for s in together.nbest], [s.score for s in single.nbest], rtol=1e-6, atol=1e-6)


def test_windows_encoded_from_many_threads_equal_each_encoded_alone(tiny_model_dirs):
    """Questions of different lengths get different strides, which the tokenizer holds between setting and using."""
    qa_model = load_model(tiny_model_dirs["bert"])
    long = gallery_example("canal-long")
    cases = [(long.question, long.passage), ("Who?", long.passage), ("What " * 40, EXAMPLES[0].passage)]
    alone = [qa.encode(qa_model, *case).inputs["input_ids"].tolist() for case in cases]

    def encode_repeatedly(case: int) -> int:
        return sum(qa.encode(qa_model, *cases[case]).inputs["input_ids"].tolist() != alone[case] for _ in range(200))

    assert all_at_once([lambda case=case: encode_repeatedly(case % len(cases)) for case in range(6)]) == [0] * 6
