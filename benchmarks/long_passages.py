"""The benchmarks' long pasted passages: made-up words sized to a number of the default model's windows, and the
most windows whose whole passage the server admits. Apart from measure_abuse, which drives Chromium, so that the
benchmarks and tests that only need a passage import no Playwright."""
from __future__ import annotations

QUESTION = "What did the bridge cost?"


def passage_of(words: int) -> str:
    """A pasted passage of made-up words (about 3 word-pieces each), with the answer at its end."""
    return " ".join(f"zq{i:05d}x" for i in range(words)) + " The bridge cost a lot."


def passage_of_windows(windows: int) -> str:
    """The longest passage_of(n) that the default model reads in at most `windows` windows."""
    from rcqa.model import load_model
    from rcqa.qa import InputError, encode

    qa_model, low, high = load_model(), 1, 9_900  # the passage's limit is 10,000 words
    while low < high:
        middle = (low + high + 1) // 2
        try:
            fits = len(encode(qa_model, QUESTION, passage_of(middle)).inputs["input_ids"]) <= windows
        except InputError:  # past the 128 windows a passage may have
            fits = False
        low, high = (middle, high) if fits else (low, middle - 1)
    return passage_of(low)


def windows_within_budget() -> int:
    """The most windows of the default model whose whole passage the server admits at its default settings, as the
    page prices it (rcqa.ui.capacity.refusal: expected seconds within the job budget, the worst case, IG refined to
    max_steps, within the time limit): 4 on this machine's default speeds, where the expected seconds alone allowed
    20 before admission read the worst case."""
    from rcqa.attribution.cost import explanation_price
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.model import load_model
    from rcqa.qa import MAX_WINDOWS
    from rcqa.ui.capacity import refusal

    qa_model, settings = load_model(), ExplainSettings(windows="all")

    def admitted(windows: int) -> bool:
        price = explanation_price(qa_model, settings, windows, qa_model.max_len, windows)
        return refusal("explanation", price, "") is None

    windows = 1
    while windows < MAX_WINDOWS and admitted(windows + 1):
        windows += 1
    return windows
