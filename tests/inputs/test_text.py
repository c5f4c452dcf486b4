"""Words as written: spaCy's tokens and Penn Treebank tags, checked against text whose words we know."""
import threading

from rcqa.gallery import GALLERY, GALLERY_BY_ID
from rcqa.text import is_punctuation, segments, sentences_of, written_words


def test_numbers_as_written_are_one_word_each_and_tagged_cd():
    words = written_words(GALLERY_BY_ID["orchard-how-many"].passage)
    assert [w.text for w in words if w.is_number] == ["14", "2,300", "1,450", "600", "250", "9", "180"]
    two_point_four = written_words("It cost 2.4 million pounds.")
    assert [w.text for w in two_point_four if w.is_number] == ["2.4", "million"]


def test_frequency_and_fraction_words_are_not_numbers():
    words = written_words("The choir meets once or twice a week, half of the singers bring a dozen friends.")
    assert not {w.text for w in words if w.is_number} & {"once", "twice", "half", "dozen"}


def test_characters_point_back_into_the_text():
    text = "Of its 2,300 trees,\n\n 1,450 are apple trees."
    words = written_words(text)
    assert all(text[w.start_char:w.end_char] == w.text for w in words)
    assert [w.text for w in words] == ["Of", "its", "2,300", "trees", ",", "1,450", "are", "apple", "trees", "."]


def test_punctuation_symbols_and_markup_are_not_words():
    assert [is_punctuation(t) for t in (",", ".", "—", "(", "$", "<b>", "</b>", "<br/>", "a", "2,300", "U.S.")] == \
        [True] * 8 + [False] * 3
    words = written_words("The <b>Eiffel</b> tower")
    assert [w.text for w in words] == ["The", "<b>", "Eiffel", "</b>", "tower"]
    assert [w.is_punctuation for w in words] == [False, True, False, True, False]


def test_threads_share_the_tagger_safely():
    texts = [f"There were {n} boats and {n + 1} ships in port number {n + 2}." for n in range(40)]
    expected = {t: [(w.text, w.tag) for w in written_words(t)] for t in texts}
    written_words.cache_clear()
    found, errors = {}, []

    def tag(text):
        try:
            found[text] = [(w.text, w.tag) for w in written_words(text)]
        except Exception as error:  # noqa: BLE001 - any failure is what the test reports
            errors.append(error)

    threads = [threading.Thread(target=tag, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and found == expected


def test_a_citation_glued_to_a_word_is_split_off_but_a_time_is_not():
    words = [w.text for w in written_words("Martin Sekulić.:32 in New York City:57–60 at 10:30")]
    assert words == ["Martin", "Sekulić", ".", ":32", "in", "New", "York", "City", ":57–60", "at", "10:30"]


def test_bidirectional_controls_are_dropped_and_every_other_character_kept():
    from rcqa.text import without_bidi_controls

    # "evil.exe" written with an override so that it reads "evil" + "exe." reversed: shown as stored, in order
    assert without_bidi_controls("photo\u202egpj.exe") == "photogpj.exe"
    controls = "".join(map(chr, [0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
    assert without_bidi_controls(f"a{controls}b") == "ab"
    hebrew = "\u05e9\u05dc\u05d5\u05dd 2,300 \u0645\u0631\u062d\u0628\u0627 \u200d"  # letters, digits, a ZWJ: kept
    assert without_bidi_controls(hebrew) == hebrew


def test_sentences_read_in_a_batch_are_those_the_whole_parse_gives():
    """sentences_of leaves the tagger out and reads texts together: the sentences must be spaCy's full parse's
    (segments), passage by passage, for the gallery's passages and texts whose sentences are hard to tell."""
    texts = [e.passage for e in GALLERY] + [
        "", "one", "Dr. Smith arrived at 3 p.m. on Jan. 5. He left.", "It rose 2.4 % in the U.S. Then it fell!",
        "\n\nA heading\n\nThen a sentence. And another one?"]
    read = sentences_of(texts)
    assert read == [segments(text).sentences for text in texts]
    assert read[texts.index("Dr. Smith arrived at 3 p.m. on Jan. 5. He left.")][-1] == (39, 47)  # "He left.", by hand
