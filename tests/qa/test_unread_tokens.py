"""A question or passage the model's tokenizer cannot read is said so under the answer (issue 61, finding 12):
counted by hand on the default model's uncased WordPiece vocabulary, and on a byte-level BPE that knows only a
few English words."""
from pathlib import Path

import pytest
from tokenizers import ByteLevelBPETokenizer
from transformers import AutoTokenizer, PreTrainedTokenizerFast

import rcqa
from rcqa.gallery import GALLERY
from rcqa.qa import unfamiliar_words, unread_tokens, unread_warning

ENGLISH = "The canal was sold to the railway company in 1852."


@pytest.fixture(scope="module")
def wordpiece():
    return AutoTokenizer.from_pretrained(Path(rcqa.__file__).parent / "default_model")


@pytest.fixture(scope="module")
def byte_level():
    trained = ByteLevelBPETokenizer()
    trained.train_from_iterator([ENGLISH] * 20, vocab_size=300, min_frequency=1, show_progress=False)
    return PreTrainedTokenizerFast(tokenizer_object=trained._tokenizer)


@pytest.mark.parametrize("text, expected", [
    # 谁 设 计 了 灯 塔 are not in the vocabulary: [UNK] each; the full-width ？ is
    ("谁设计了灯塔？", (6, 7)),
    ("Who designed the lighthouse?", (0, 5)),
    # к ##т ##о: spelt letter by letter, each piece one character of a three-piece word; ? is a word of its own
    ("Кто?", (3, 4)),
    # we ##r · hat · den · le ##uch ##tt ##ur ##m · en ##t ##wo ##rf ##en · ?: three one-letter pieces of 15 tokens;
    # German is read as pieces the vocabulary knows, not as unknown tokens
    ("Wer hat den Leuchtturm entworfen?", (3, 15)),
])
def test_unread_tokens_on_the_default_wordpiece(wordpiece, text, expected):
    assert unread_tokens(wordpiece, text) == expected


def test_a_byte_level_bpe_reads_a_chinese_character_as_three_unread_bytes(byte_level):
    assert unread_tokens(byte_level, "灯") == (3, 3)  # U+706F is three bytes in UTF-8, each a token of its own
    assert unread_tokens(byte_level, "The canal") == (0, 2)  # both words learnt whole: The · Ġcanal


def test_a_chinese_question_is_warned_of_in_one_sentence_an_english_one_is_not(wordpiece):
    warning = unread_warning(wordpiece, ENGLISH, "谁设计了灯塔？")
    assert warning == ("Most of the question's tokens are unknown to the model's tokenizer (6 of 7: [UNK], or a word "
                       "spelt out letter by letter), so the model can hardly read it and its answer is likely a guess.")
    assert unread_warning(wordpiece, ENGLISH, "Who bought the canal?") is None


def test_a_chinese_passage_and_question_are_both_named(wordpiece):
    warning = unread_warning(wordpiece, "灯塔谁设计", "谁设计了灯塔？")
    assert warning is not None and "the question's and the passage's tokens" in warning and "(6 of 7 and 5 of 5" in warning


@pytest.mark.parametrize("text, expected", [
    # we ##r · hat · den · le ##uch ##tt ##ur ##m · en ##t ##wo ##rf ##en: wer, leuchtturm and entworfen in pieces;
    # the ? has no letter and is not counted
    ("Wer hat den Leuchtturm entworfen?", (3, 5)),
    ("Who designed the lighthouse?", (0, 4)),
    ("谁设计了灯塔？", (6, 6)),  # six [UNK] words; the full-width ？ has no letter
    # in · the · canal · s · owners · sold · it, each a vocabulary word; "1852", "," "'" and "." have no letter
    ("In 1852, the canal's owners sold it.", (0, 7)),
])
def test_unfamiliar_words_on_the_default_wordpiece(wordpiece, text, expected):
    assert unfamiliar_words(wordpiece, text) == expected


def test_a_german_question_and_passage_are_warned_of_though_their_tokens_are_known(wordpiece):
    passage = ("Der Leuchtturm wurde im Jahr 1874 von der Ingenieurin Margaret Ellison entworfen. Er steht auf einer "
               "felsigen Landzunge und warnt seitdem die Schiffe vor den gefährlichen Untiefen der Bucht.")
    question = "Wer hat den Leuchtturm entworfen?"
    n_question, _ = unread_tokens(wordpiece, question)
    n_passage, total_passage = unread_tokens(wordpiece, passage)
    assert n_passage <= total_passage / 2  # the token rule alone says nothing: German is read in known pieces
    words, total = unfamiliar_words(wordpiece, passage)
    assert words > total / 2
    warning = unread_warning(wordpiece, passage, question)
    assert warning == (f"Most of the question's and the passage's words are not in the model's vocabulary (3 of 5 and "
                       f"{words} of {total} read in pieces), as with a language it was not trained on, so it may "
                       "misread them and its answer may be a guess.")
    assert str(unread_warning(wordpiece, ENGLISH, question)).startswith("Most of the question's words are not")


def test_no_gallery_example_is_warned_of(wordpiece):
    assert [example.id for example in GALLERY
            if unread_warning(wordpiece, example.passage, example.question) is not None] == []
