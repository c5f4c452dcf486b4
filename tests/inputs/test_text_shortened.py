"""A word drawn as a label is at most LABEL_CHARS characters (issue 61, finding 12)."""
from rcqa.text import LABEL_CHARS, shortened


def test_a_long_word_is_cut_to_the_limit_with_an_ellipsis():
    assert shortened("x" * 20_000) == "x" * 29 + "…" and LABEL_CHARS == 30
    assert shortened("Leuchtturmwärter", 10) == "Leuchttur…"


def test_a_word_within_the_limit_is_kept_whole():
    assert shortened("lighthouse") == "lighthouse"
    assert shortened("x" * 30) == "x" * 30
