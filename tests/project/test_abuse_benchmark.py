"""The abuse benchmark pastes the largest whole passage the server admits (benchmarks/measure_abuse.py): admitted by
the page's own rule, which reads each job's worst case against the time limit, and one window more refused for it.
Before, it picked 20 windows by the expected seconds alone, which the server refuses."""
from benchmarks.long_passages import QUESTION, passage_of_windows, windows_within_budget
from rcqa.attribution.cost import explanation_price
from rcqa.attribution.settings import ExplainSettings
from rcqa.model import load_model
from rcqa.qa import encode
from rcqa.ui.capacity import job_time_limit, refusal


def test_the_abuse_benchmarks_whole_passage_is_the_largest_the_server_admits():
    qa_model, settings = load_model(), ExplainSettings(windows="all")
    windows = windows_within_budget()
    passage = passage_of_windows(windows)
    read = len(encode(qa_model, QUESTION, passage))  # the question the benchmark pastes with it
    assert read == windows
    price = lambda n: explanation_price(qa_model, settings, n, qa_model.max_len, n)  # noqa: E731
    assert refusal("explanation", price(windows), "") is None
    beyond = price(windows + 1)
    assert beyond.most > job_time_limit() and "past the" in refusal("explanation", beyond, "")
