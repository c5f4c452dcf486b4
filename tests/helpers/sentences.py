"""Read a view's sentences against the numbers its chart draws, by parsing the sentence and recomputing each number
from the chart's own data (never from the function that wrote the sentence)."""
import re

import numpy as np

PERCENT = re.compile(r"([a-z+]+) (\d+)%")
RISE_COUNT = re.compile(r"(top-k words|random words|bottom-k words|skipping the block) at (\d+) of (\d+) layers")
BAR_NAMES = {"top-k words": "top-k", "random words": "random", "bottom-k words": "bottom-k",
             "skipping the block": "skip block"}


def check_role_readings(readings: list[tuple[str, str]], stacks: dict[str, list[float]], layers: list[str]) -> None:
    """Each phase's percents are the means of the chart's stacks (its bars' heights per layer) over the phase's
    layers, to the whole percent; every stack drawn in it is named (a stack of two roles where it is drawn at all);
    they add up to 100; and the role said to lead is the largest."""
    for phase, reading in readings:
        if reading == "no layer here has any top word.":
            continue
        first, _, last = phase[phase.index("(") + 1:-1].partition("–")
        span = slice(layers.index(first), layers.index(last or first) + 1)
        means = {name: np.nanmean(np.asarray(values[span], dtype=float)) for name, values in stacks.items()}
        said = dict((name, int(value)) for name, value in PERCENT.findall(reading.split(":")[0]))
        assert sum(said.values()) == 100, reading
        for name, mean in means.items():
            if name in said:
                assert abs(said[name] - mean) < 1, (phase, name, said[name], mean)
            else:
                assert "+" in name and mean < 1, (phase, name, mean, reading)  # only an empty two-role stack
        lead = [word for word in re.split(r"[ ,]+", reading.split(" words")[0]) if word in said]  # who leads
        assert lead and all(said[role] == max(said.values()) for role in lead), (reading, said)


def legend_role(name: str) -> str:
    """The role a roles chart's legend entry stacks, as the readings name it: "answer (the rejected best span)+query"
    is answer+query, "foil only" is foil."""
    return re.sub(r" \([^)]*\)| only", "", name)


def check_knockout_reading(sentence: str, bars: dict[str, list[float]], against: list[str]) -> None:
    """The reading against the interventions chart: for each kind of knock-out, at how many layers its bar is above
    0 at the shown 0.1 point (and out of how many bars); the top-k bars' smallest and largest rises; and the words
    named as competing with the span are among those the top-k bars' hovers list as scored against it, where the
    top-k bars rose."""
    rose = {kind: [round(y, 1) for y in heights if round(y, 1) > 0] for kind, heights in bars.items()}
    if not any(rose.values()):
        assert sentence == "No knock-out raised the span's probability.", sentence
        return
    said = {BAR_NAMES[name]: (int(count), int(total)) for name, count, total in RISE_COUNT.findall(sentence)}
    assert said == {kind: (len(up), len(bars[kind])) for kind, up in rose.items() if up}, (sentence, rose)
    if len(rose["top-k"]) > 1:
        assert f"by {min(rose['top-k']):+.1f} to {max(rose['top-k']):+.1f} points" in sentence, sentence
    rival_words = {word for height, words in zip(bars["top-k"], against) if round(height, 1) > 0
                   for word in words.split(", ") if words}
    named = set(re.findall(r"“([^”]+)”", sentence.split("magnitude:")[-1])) if "magnitude:" in sentence else set()
    assert named <= rival_words and bool(named) == bool(rival_words), (named, rival_words)
