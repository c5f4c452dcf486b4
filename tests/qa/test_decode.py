"""Span decoding: validity rules, exact search, window merging, and character offsets."""
import math

import pytest
import torch

from rcqa.qa import InputError, validate
from rcqa.spans import MAX_ANSWER_TOKENS, Windows, answer_standing, decode
from tests.helpers.windows import OFFSETS, PASSAGE, PASSAGE_MASK, windows

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
    offsets = [(2 * i, 2 * i + 1) for i in range(length)]  # one token per word: "x x x ..."
    mask = torch.ones(1, length, dtype=torch.bool)
    start, end = logits(0, length - 1, length)
    spans = decode(start, end, windows(offsets=[offsets], mask=mask), " ".join("x" * length), n_best=50)
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
    assert (best.window, best.text) == (1, "delta") and len(windows(2)) == 2  # the windows, not their tokens


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


# Whole-word answers. Each passage below is tokenised by hand into word-pieces, as a BERT tokenizer
# would: [CLS] q [SEP] passage pieces [SEP]; the passage tokens start at index 3.
def pieces(spans: list[tuple[int, int]]) -> Windows:
    offsets = [(0, 0), (0, 1), (0, 0), *spans, (0, 0)]
    mask = torch.tensor([[3 <= t < 3 + len(spans) for t in range(len(offsets))]])
    return windows(offsets=[offsets], mask=mask)


def passage_logits(start: list[float], end: list[float]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor([[0.0] * 3 + start + [0.0]]), torch.tensor([[0.0] * 3 + end + [0.0]])


PRIYA_RAMAN = pieces([(0, 3), (3, 5), (6, 9), (9, 11)])  # pri ##ya ram ##an


def test_a_word_split_into_pieces_is_answered_whole_with_the_summed_probability():
    s, e = [1.0, 2.5, 0.0, 0.5], [0.5, 0.0, 1.0, 3.0]  # the best token span is "ya Raman" (2.5 + 3.0)
    start, end = passage_logits(s, e)
    spans = decode(start, end, PRIYA_RAMAN, "Priya Raman", n_best=20)
    x = {(i, j): math.exp(s[i] + e[j]) for i in range(4) for j in range(i, 4)}  # the 10 valid token spans
    total = sum(x.values())
    expected = {"Priya": (x[0, 0] + x[0, 1] + x[1, 1]) / total,
                "Priya Raman": (x[0, 2] + x[0, 3] + x[1, 2] + x[1, 3]) / total,
                "Raman": (x[2, 2] + x[2, 3] + x[3, 3]) / total}
    assert {s.text: s.probability for s in spans} == pytest.approx(expected, rel=1e-6)
    best = spans[0]
    assert (best.text, best.start_char, best.end_char) == ("Priya Raman", 0, 11)
    # its tokens cover the whole answer, so an explanation targets the whole words
    assert (best.start_token, best.end_token, best.start_logit, best.end_logit) == (3, 6, 1.0, 3.0)


def test_two_pieces_of_one_answer_can_outrank_a_better_single_span():
    # "Priya met": pri ##ya met. "met" alone scores 5.5; "Priya" is two spans scoring 5 each
    s, e = [5.0, -10.0, 15.5], [0.0, 0.0, -10.0]
    start, end = passage_logits(s, e)
    spans = decode(start, end, pieces([(0, 3), (3, 5), (6, 9)]), "Priya met", n_best=20)
    total = 2 * math.exp(5) + math.exp(-10) + math.exp(5.5) + math.exp(-5) + math.exp(-20)
    assert [s.text for s in spans] == ["Priya", "met", "Priya met"]
    assert [s.probability for s in spans] == pytest.approx(
        [(2 * math.exp(5) + math.exp(-10)) / total, math.exp(5.5) / total,
         (math.exp(-5) + math.exp(-20)) / total], rel=1e-6)
    assert spans[0].score == 5.0 and spans[1].score == 5.5


EIFFEL = "The <b>Eiffel</b> tower"
# the < b > e ##iff ##el < / b > tower
EIFFEL_PIECES = pieces([(0, 3), (4, 5), (5, 6), (6, 7), (7, 8), (8, 11), (11, 13), (13, 14), (14, 15),
                                (15, 16), (16, 17), (18, 23)])


def test_markup_is_trimmed_from_an_answer():
    start, end = passage_logits([0.0] * 12, [0.0] * 12)
    start[0, 3 + 2], end[0, 3 + 7] = 10.0, 10.0  # the best token span is "b>Eiffel<"
    spans = decode(start, end, EIFFEL_PIECES, EIFFEL, n_best=50)
    best = spans[0]
    assert (best.text, best.start_char, best.end_char, best.start_token, best.end_token) == ("Eiffel", 7, 13, 7, 9)
    assert {s.text for s in spans} == {"The", "The <b>Eiffel", "The <b>Eiffel</b> tower", "Eiffel",
                                       "Eiffel</b> tower", "tower"}


def test_probabilities_of_the_whole_word_answers_sum_to_one():
    start, end = passage_logits(torch.randn(12).tolist(), torch.randn(12).tolist())
    spans = decode(start, end, EIFFEL_PIECES, EIFFEL, n_best=100)
    assert len(spans) == 6
    assert sum(s.probability for s in spans) == pytest.approx(1.0, abs=1e-6)
    assert [s.probability for s in spans] == sorted((s.probability for s in spans), reverse=True)


def test_punctuation_alone_is_never_an_answer():
    # alpha , beta . — the comma alone has the best token span
    start, end = passage_logits([0.0, 9.0, 0.0, 1.0], [0.0, 9.0, 0.0, 1.0])
    spans = decode(start, end, pieces([(0, 5), (5, 6), (7, 11), (11, 12)]), "alpha, beta.", 20)
    assert sorted(s.text for s in spans) == ["alpha", "alpha, beta", "beta"]
    start, end = passage_logits([1.0, 2.0, 3.0], [3.0, 2.0, 1.0])
    assert decode(start, end, pieces([(0, 1), (1, 2), (3, 4)]), "-- !") == []  # - - !


def test_a_word_cut_by_the_window_edge_is_taken_from_the_window_that_holds_it():
    # window 0 reads "pri ##ya ram", window 1 "ram ##an"; the best token span is "ram" in window 0
    offsets = [[(0, 0), (0, 3), (3, 5), (6, 9), (0, 0)], [(0, 0), (6, 9), (9, 11), (0, 0), (0, 0)]]
    mask = torch.tensor([[False, True, True, True, False], [False, True, True, False, False]])
    start, end = torch.zeros(2, 5), torch.zeros(2, 5)
    start[0, 3], end[0, 3] = 5.0, 5.0
    best = decode(start, end, windows(offsets=offsets, mask=mask), "Priya Raman")[0]
    assert (best.text, best.window, best.start_token, best.end_token) == ("Raman", 1, 1, 2)
    # with no window holding the whole word, the token span itself stands for it
    alone = decode(start[:1], end[:1], windows(offsets=offsets[:1], mask=mask[:1]), "Priya Raman")[0]
    assert (alone.text, alone.window, alone.start_token, alone.end_token) == ("Raman", 0, 3, 3)


def test_a_passage_without_words_is_refused_before_it_is_answered():
    with pytest.raises(InputError, match="only punctuation or markup"):
        validate("<b> -- </b> !", "what?")
    validate("<b>Eiffel</b>", "what?")


def test_every_token_belongs_to_the_written_word_it_starts_in_or_the_next_one():
    from rcqa.spans import _passage_words

    words = _passage_words("ab cd, ef ")  # ab | cd | , | ef
    offsets = torch.tensor([[[0, 1], [1, 2], [2, 5], [3, 5], [5, 6], [6, 9], [7, 9], [9, 10]]])
    # a token starting in the space before a word (as RoBERTa's " cd") belongs to that word; past the
    # last word, to the last word
    assert words.of_tokens(offsets).tolist() == [[0, 0, 1, 1, 2, 3, 3, 3]]


def test_equal_probabilities_go_to_the_better_single_span():
    from rcqa.spans import _ranked

    probability = torch.tensor([0.25, 0.5, 0.25], dtype=torch.float64)
    assert _ranked(probability, torch.tensor([1.0, 2.0, 3.0]), 3) == [1, 2, 0]
    assert _ranked(probability, torch.tensor([3.0, 2.0, 1.0]), 2) == [1, 0]


def test_answers_tied_in_probability_and_score_come_in_passage_order_on_any_device():
    # 25 one-token words, every logit equal: all 325 spans tie. The n-best list must not depend on how a device's
    # unstable sort orders ties (torch's CPU sort reorders them from about 20 elements): the earliest first word,
    # then the earliest last word, so the 20 best all start at the first word
    words = [f"w{i}" for i in range(25)]
    passage = " ".join(words)
    starts = [len(" ".join(words[:i])) + (i > 0) for i in range(len(words))]
    offsets = [(0, 0)] + [(start, start + len(w)) for w, start in zip(words, starts)] + [(0, 0)]
    mask = torch.tensor([[False] + [True] * 25 + [False]])
    spans = decode(torch.zeros(1, 27), torch.zeros(1, 27), windows(offsets=[offsets], mask=mask), passage, n_best=20)
    assert [s.text for s in spans] == [" ".join(words[:n]) for n in range(1, 21)]


def test_no_passage_tokens_hold_no_span():
    from rcqa.spans import token_span

    assert token_span(OFFSETS, [], 0, 5) is None
    assert token_span(OFFSETS, [3, 4, 5, 6], 6, 16) == (4, 5)


def test_an_answers_standing_is_its_rank_and_probability_among_every_answer_by_hand():
    start = torch.tensor([[0.0, 9.0, 0.0, 1.0, 2.0, 0.0, 0.5, 0.0]])  # the question token's 9 never counts
    end = torch.tensor([[0.0, 9.0, 0.0, 0.0, 1.0, 3.0, 0.2, 0.0]])
    pairs = [(s, e) for s in range(3, 7) for e in range(s, 7)]  # one token per word: every pair is its own answer
    total = sum(math.exp(start[0, s] + end[0, e]) for s, e in pairs)
    probability = {pair: math.exp(start[0, pair[0]] + end[0, pair[1]]) / total for pair in pairs}
    for pair, p in probability.items():
        rank, found = answer_standing(start, end, windows(), PASSAGE, (0, *pair))
        assert found == pytest.approx(p) and rank == 1 + sum(q > p for q in probability.values())
    assert answer_standing(start, end, windows(), PASSAGE, (0, 4, 5))[0] == 1  # "beta gamma": 2 + 3
    assert answer_standing(start, end, windows(), PASSAGE, (0, 3, 4), max_answer_tokens=1) == (None, 0.0)
