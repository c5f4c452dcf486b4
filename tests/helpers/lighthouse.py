"""The gallery's lighthouse passage as its four sentences, as a reader splits them (spaCy's parser must agree)."""

SENTENCES = [
    "The lighthouse on Corran Point was designed by the engineer Margaret Ellison and first lit in 1872.",
    "Before it was built, ships approaching the harbour relied on a bonfire that local fishermen kept burning on the "
    "cliffs.",
    "Ellison chose a granite tower 38 metres tall, painted white with a single red band, because the stone could be "
    "quarried only two miles inland.",
    "The light was automated in 1986, and the last keeper, Thomas Reid, moved to the mainland the same year.",
]
