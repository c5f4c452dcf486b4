"""Span decoding: validity rules, exact search, window merging, and character offsets."""
import torch

from rcqa.qa import MAX_ANSWER_TOKENS, Windows, decode

PASSAGE = "alpha beta gamma delta"
# [CLS] q [SEP] alpha beta gamma delta [SEP]
OFFSETS = [(0, 0), (0, 1), (0, 0), (0, 5), (6, 10), (11, 16), (17, 22), (0, 0)]
PASSAGE_MASK = torch.tensor([[False, False, False, True, True, True, True, False]])


def windows(n: int = 1, offsets=None, mask=None) -> Windows:
    mask = PASSAGE_MASK.repeat(n, 1) if mask is None else mask
    return Windows(inputs={"input_ids": torch.zeros(mask.shape, dtype=torch.long)},
                   offsets=offsets or [OFFSETS] * n, passage_mask=mask)


def logits(start_peak: int, end_peak: int, length: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    start, end = torch.zeros(1, length), torch.zeros(1, length)
    start[0, start_peak], end[0, end_peak] = 10.0, 10.0
    return start, end


def test_best_span_is_the_highest_scoring_valid_pair():
    start, end = logits(4, 5)
    best = decode(start, end, windows(), PASSAGE)[0]
    assert (best.text, best.start_char, best.end_char) == ("beta gamma", 6, 16)
    assert best.score == 20.0


def test_end_before_start_is_never_returned():
    start, end = logits(5, 4)  # independent argmaxes would give an empty, inverted span
    spans = decode(start, end, windows(), PASSAGE)
    assert all(s.start_token <= s.end_token for s in spans)
    assert spans[0].score == 10.0  # one of the peaks paired with a zero, never both


def test_question_and_special_tokens_are_never_in_a_span():
    start, end = logits(1, 1)  # the question token has the highest logits
    spans = decode(start, end, windows(), PASSAGE)
    assert all(PASSAGE_MASK[0, s.start_token] and PASSAGE_MASK[0, s.end_token] for s in spans)


def test_spans_longer_than_the_limit_are_excluded():
    length = MAX_ANSWER_TOKENS + 10
    offsets = [(i, i + 1) for i in range(length)]
    mask = torch.ones(1, length, dtype=torch.bool)
    start, end = logits(0, length - 1, length)
    spans = decode(start, end, windows(offsets=[offsets], mask=mask), "x" * length, n_best=50)
    assert all(s.end_token - s.start_token < MAX_ANSWER_TOKENS for s in spans)
    assert spans[0].score == 10.0


def test_probabilities_are_a_distribution_over_valid_spans():
    start, end = torch.randn(1, 8), torch.randn(1, 8)
    spans = decode(start, end, windows(), PASSAGE, n_best=100)
    assert len(spans) == 10  # 4 passage tokens: 4 + 3 + 2 + 1 valid spans
    assert abs(sum(s.probability for s in spans) - 1.0) < 1e-5
    assert [s.score for s in spans] == sorted((s.score for s in spans), reverse=True)


def test_best_span_across_windows_wins_and_records_its_window():
    start, end = torch.zeros(2, 8), torch.zeros(2, 8)
    start[0, 3], end[0, 3] = 2.0, 2.0
    start[1, 6], end[1, 6] = 5.0, 5.0
    best = decode(start, end, windows(2), PASSAGE)[0]
    assert (best.window, best.text) == (1, "delta")


def test_a_span_repeated_by_overlapping_windows_is_listed_once():
    start, end = torch.zeros(2, 8), torch.zeros(2, 8)
    start[:, 4], end[:, 4] = 3.0, 3.0
    start[1, 4], end[1, 4] = 4.0, 4.0
    spans = decode(start, end, windows(2), PASSAGE, n_best=20)
    assert len({(s.start_char, s.end_char) for s in spans}) == len(spans) == 10
    assert spans[0].window == 1 and spans[0].score == 8.0


def test_answer_at_a_window_boundary_is_found_in_the_window_that_holds_it():
    # window 0 ends with "gamma", window 1 starts with it (a stride overlap of one token)
    offsets = [[(0, 0), (0, 5), (6, 10), (11, 16), (0, 0)], [(0, 0), (11, 16), (17, 22), (0, 0), (0, 0)]]
    mask = torch.tensor([[False, True, True, True, False], [False, True, True, False, False]])
    start, end = torch.zeros(2, 5), torch.zeros(2, 5)
    start[1, 1], end[1, 2] = 6.0, 6.0  # "gamma delta" crosses the end of window 0
    best = decode(start, end, windows(offsets=offsets, mask=mask), PASSAGE)[0]
    assert (best.text, best.window) == ("gamma delta", 1)
