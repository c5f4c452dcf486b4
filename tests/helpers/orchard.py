"""The orchard question and passage as hand-made words (tests/helpers/handmade.py), with scores per layer chosen
so that every analysis' value can be worked out on paper."""

QUESTION = [("In", "IN"), ("the", "DT"), ("orchard", "NN"), (",", ","), ("how", "WRB"), ("many", "JJ"),
            ("pear", "NN"), ("trees", "NNS"), ("are", "VBP"), ("there", "EX"), ("?", ".")]


QUESTION_TEXT = "In the orchard, how many pear trees are there?"
# word (tag): scores at embeddings, block 0, block 1. Punctuation carries large scores that must never count.
PASSAGE = [
    ("The", "DT", [0, 0, 0]), ("farm", "NN", [0, 0, 0]), ("has", "VBZ", [2, 0, 0]), ("14", "CD", [0, 2, 0]),
    ("fields", "NNS", [0, 0, 0]), (".", ".", [0, 0, 9]), ("Of", "IN", [0, 0, 0]), ("its", "PRP$", [0, 0, 0]),
    ("2,300", "CD", [[0.5, 0.25, 0.25], [0, 0, 0], [0, 0, 0]]),  # three word-pieces: "2", ",", "300"
    ("trees", "NNS", [5, 1.5, 0]), (",", ",", [100, 0, 7]), ("600", "CD", [0, 6, 0]), ("are", "VBP", [0, 0, 0]),
    ("pear", "NN", [4, 0, 0]), ("trees", "NNS", [3, 0, 0]), (",", ",", [0, 50, 0]), ("and", "CC", [0, 0, 0]),
    ("250", "CD", [0, 3, 0]), ("are", "VBP", [0, 0, 0]), ("plums", "NNS", [0, 0, 0]), (".", ".", [0, 0, 0]),
]


WORDS = [w for w, _, _ in PASSAGE if w not in ",."]  # the 17 passage words: punctuation is no word
SIX_HUNDRED = 11  # index of "600" among all passage words, punctuation included
