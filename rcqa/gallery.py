"""The built-in examples, written for this project (original passages, not taken from any dataset)."""
from __future__ import annotations

from rcqa.types import Example, GoldAnswer


def _example(id: str, title: str, passage: str, question: str, answer: str | None) -> Example:
    if answer is None:
        return Example(id=id, title=title, passage=passage, question=question, is_impossible=True)
    start = passage.index(answer)  # a typo in a gallery entry fails loudly at import
    return Example(id=id, title=title, passage=passage, question=question,
                   answers=(GoldAnswer(text=answer, start_char=start),))


_LIGHTHOUSE = (
    "The lighthouse on Corran Point was designed by the engineer Margaret Ellison and first lit in "
    "1872. Before it was built, ships approaching the harbour relied on a bonfire that local fishermen "
    "kept burning on the cliffs. Ellison chose a granite tower 38 metres tall, painted white with a "
    "single red band, because the stone could be quarried only two miles inland. The light was "
    "automated in 1986, and the last keeper, Thomas Reid, moved to the mainland the same year."
)

_ORCHARD = (
    "The Hollins family orchard covers 14 hectares on the southern slope of the valley. Of its 2,300 "
    "trees, 1,450 are apple trees, 600 are pear trees and the remaining 250 are plums. Each autumn the "
    "family hires 9 pickers, who harvest about 180 tonnes of fruit. Most of the apples are pressed into "
    "cider at a mill in the village, while the pears are sold at the Saturday market."
)

_BRIDGE = (
    "Construction of the Arlen river bridge began in March 1931 and took four years. The finished "
    "bridge is 412 metres long and rests on 7 stone piers. It cost 2.4 million pounds, roughly twice "
    "the original estimate, because floods in 1933 destroyed two of the piers under construction. "
    "About 5,000 vehicles cross it every day, and a toll of 20 pence was charged until 1962."
)

_COMET = (
    "Astronomers at the Kestrel Ridge Observatory discovered the comet on 9 February 2019, while "
    "searching for near-Earth asteroids. The comet was named after Priya Raman, the graduate student "
    "who first noticed its faint tail in a series of images. It takes about 71 years to orbit the Sun "
    "and will next pass close to Earth in 2090."
)

_BAKERY = (
    "Luca Ferri opened his first bakery in Turin in 1994 with a loan from his grandmother. The shop "
    "sold only three kinds of bread at first. Ten years later Ferri moved to Lyon, where he opened a "
    "second bakery next to the central railway station. Today the Lyon shop employs 12 bakers and "
    "sells around 3,000 loaves a week."
)

_RIVER = (
    "The Velta is a river in the north of the country. It rises in the Morrow Hills at an altitude of "
    "900 metres and flows east for 215 kilometres before it joins the sea at the port of Halden. The "
    "river is navigable by small boats for its last 60 kilometres. Salmon return to the Velta every "
    "spring to spawn in its upper reaches."
)

_CHOIR = (
    "The Eastbrook Youth Choir was founded in 2008 by the music teacher Alan Osei with 16 singers. "
    "Membership grew quickly: by 2015 the choir had 64 members, and it now has 90, aged between 11 "
    "and 18. The choir rehearses twice a week and gives about 20 concerts a year."
)

_LIBRARY = (
    "The town library moved into the old corn exchange in 1979. The building's main hall, with its "
    "glass roof, now holds the reading room, and the former trading offices became study rooms. The "
    "library lends books, maps and musical instruments, and it runs a reading club for children on "
    "Wednesday afternoons."
)

_VACCINE = (
    "In 1796 the English doctor Edward Jenner tested an idea that country people had long held: that "
    "milkmaids who caught cowpox did not later fall ill with smallpox. Jenner took material from a "
    "cowpox sore on the hand of a milkmaid and scratched it into the arm of an eight-year-old boy. "
    "Weeks later he exposed the boy to smallpox, and the boy stayed healthy. The word vaccine comes "
    "from the Latin word for cow, vacca."
)

_MARATHON = (
    "The city marathon was first run in 1981, when 212 runners finished the course. The race now "
    "attracts more than 30,000 entrants each year. The course record of 2 hours 5 minutes was set in "
    "2017 by Daniel Mwangi, who broke the previous record by 41 seconds. Runners pass 6 bridges and "
    "finish in front of the cathedral."
)

_CANAL = (
    "The Grand Western Canal Company was formed in 1796 to link the river port of Selby Cross with the "
    "coal fields of the upper valley. Work started in the spring of 1797 under the direction of the "
    "engineer Joseph Hartley, who had trained on the canals of the Midlands. The first section, eleven "
    "miles of level water without a single lock, opened in 1799 and at once cut the price of coal in "
    "the port by almost half. Money then ran short, and for eight years nothing more was dug. "
    "\n\n"
    "The second phase was the difficult one. Between the lowland section and the coal fields the "
    "ground rises by more than seventy metres, and Hartley had to choose between a long flight of "
    "locks and a tunnel through Denby Ridge. He chose the locks, arguing that a tunnel would be "
    "expensive to ventilate and slow for horse-drawn boats, which would have to be legged through by "
    "hand. Twenty-two locks were built in a distance of three miles, and the flight became known "
    "locally as the Staircase. Each lock took a loaded boat about ten minutes to pass, so a full "
    "ascent of the Staircase lasted close to four hours. "
    "\n\n"
    "Water supply was a constant worry. Every boat that climbed the Staircase drew water down from the "
    "summit, and in dry summers the upper pound fell so low that boats ran aground. To solve this the "
    "company built a reservoir at Holme Moss, flooding a small valley and the hamlet that stood in it. "
    "The reservoir was finished in 1811, and the same year the canal opened along its full length of "
    "twenty-nine miles. "
    "\n\n"
    "For three decades the canal prospered. Coal, limestone and grain went down to Selby Cross, and "
    "manufactured goods came back up. At its peak in 1838 the company carried over 400,000 tons of "
    "cargo and paid its shareholders a dividend of twelve per cent. The railway reached the valley in "
    "1846, however, and within twenty years most of the traffic had moved to it. The railway company "
    "bought the canal in 1852, largely to remove a competitor, and allowed it to decay. "
    "\n\n"
    "Commercial traffic ended in 1931. The Staircase locks were filled in during the 1950s, and parts "
    "of the channel were used as a rubbish tip. A volunteer trust was founded in 1974 to save what "
    "remained. Its members cleared the lower section by hand over many summers, and in 1992 the first "
    "two miles reopened to pleasure boats. The trust's long-term aim is to restore the Staircase "
    "itself, which it estimates will cost around fifteen million pounds. Today the canal is best known "
    "for its towpath, which forms part of a long-distance walking route, and for the kingfishers and "
    "otters that have returned to the quiet water."
)

GALLERY: tuple[Example, ...] = (
    _example("lighthouse-who", "Corran Point lighthouse", _LIGHTHOUSE,
             "Who designed the lighthouse on Corran Point?", "Margaret Ellison"),
    _example("lighthouse-when", "Corran Point lighthouse", _LIGHTHOUSE,
             "When was the lighthouse first lit?", "1872"),
    _example("orchard-how-many", "The Hollins orchard", _ORCHARD,
             "How many pear trees are in the orchard?", "600"),
    _example("orchard-how-much", "The Hollins orchard", _ORCHARD,
             "How much fruit do the pickers harvest each autumn?", "about 180 tonnes"),
    _example("bridge-how-much", "The Arlen river bridge", _BRIDGE,
             "How much did the bridge cost?", "2.4 million pounds"),
    _example("bridge-how-many", "The Arlen river bridge", _BRIDGE,
             "How many stone piers does the bridge rest on?", "7"),
    _example("comet-who", "A comet's name", _COMET,
             "Who was the comet named after?", "Priya Raman"),
    _example("bakery-where", "Ferri's bakeries", _BAKERY,
             "In which city did Luca Ferri open his first bakery?", "Turin"),
    _example("river-where", "The river Velta", _RIVER,
             "Where does the Velta rise?", "the Morrow Hills"),
    _example("choir-how-many", "Eastbrook Youth Choir", _CHOIR,
             "How many members does the choir have now?", "90"),
    _example("vaccine-what", "Jenner and the first vaccine", _VACCINE,
             "What does the Latin word vacca mean?", "cow"),
    _example("marathon-who", "The city marathon", _MARATHON,
             "Who set the course record?", "Daniel Mwangi"),
    _example("canal-long", "The Grand Western Canal (a long passage)", _CANAL,
             "In what year did the railway company buy the canal?", "1852"),
    _example("library-unanswerable", "The town library (no answer in the passage)", _LIBRARY,
             "Who was the first head librarian?", None),
    # SQuAD 2.0-style: the passage holds a plausible wrong answer (the last keeper; the milkmaid, the boy unnamed)
    _example("lighthouse-unanswerable", "Corran Point lighthouse (no answer in the passage)", _LIGHTHOUSE,
             "Who was the first keeper of the lighthouse?", None),
    _example("vaccine-unanswerable", "Jenner and the first vaccine (no answer in the passage)", _VACCINE,
             "Who was the boy that Jenner tested?", None),
)


GALLERY_BY_ID: dict[str, Example] = {example.id: example for example in GALLERY}


def gallery_example(example_id: str) -> Example:
    if example_id in GALLERY_BY_ID:
        return GALLERY_BY_ID[example_id]
    raise KeyError(f"no gallery example {example_id!r}; choose one of {', '.join(e.id for e in GALLERY)}")
