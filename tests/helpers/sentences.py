"""Read a view's sentences against the numbers its chart draws, by parsing the sentence and recomputing each number
from the chart's own data (never from the function that wrote the sentence)."""
import re

import numpy as np

PERCENT = re.compile(r"([a-z+]+) (\d+)%")
RISE_COUNT = re.compile(r"(top-k words|random words|bottom-k words|skipping the block) at (\d+) of (\d+) layers")
BAR_NAMES = {"top-k words": "top-k", "random words": "random", "bottom-k words": "bottom-k",
             "skipping the block": "skip block"}
CEILING = re.compile(r"can fill at most (\d+)(?:–(\d+))?% of the top-\d+, and do(?:es)? so at (\d+) of (\d+) layers? here")
HOLDS = re.compile(r"holds? ([\d.]+)% of (?:the|each) layer's attribution")


def check_role_readings(readings: list[tuple[str, str]], traces: dict[str, list[float]], layers: list[str]) -> None:
    """Each phase's reading against the roles chart's traces (its legend names, as legend_role gives them, to their
    y values per layer): the stacked bars, the answer's ceiling and its share of the attribution.

    Every stack's percent is the mean of its bar heights over the phase's layers that have top words, to the whole
    percent; a kind ("supporting") is said with its stacks' sum and names its two-role stack ("of which
    supporting+query N%") where that is drawn at all; the kinds add up to 100; the kind said to lead is the largest
    (every one of them, where they are level), and "mostly" is past half. The ceiling is said exactly where, at some
    layer of the phase, the answer's bars reach the ceiling's dash below 100 %, with its range and that count of
    layers; and the answer's share of the attribution is the mean of the line over those layers."""
    lines = {name: np.asarray(values, dtype=float) for name, values in traces.items()
             if "ceiling" in name or "attribution" in name}
    stacks = {name: np.asarray(values, dtype=float) for name, values in traces.items() if name not in lines}
    # no word of the answer in the passage shown: no line drawn (read as a ceiling of 0), and nothing said of it
    ceiling = next((values for name, values in lines.items() if "ceiling" in name), np.zeros(len(layers)))
    attribution = next((values for name, values in lines.items() if "attribution" in name), np.zeros(len(layers)))
    answer = np.sum([values for name, values in stacks.items() if name.partition("+")[0] == "answer"], axis=0)
    for phase, reading in readings:
        if reading == "no layer here has any top word.":
            continue
        first, _, last = phase[phase.index("(") + 1:-1].partition("–")
        span = range(layers.index(first), layers.index(last or first) + 1)
        rows = [i for i in span if not np.isnan(next(iter(stacks.values()))[i])]  # layers with top words
        means = {name: float(values[rows].mean()) for name, values in stacks.items()}
        detail = reading[reading.index("(") + 1:reading.index("):")]
        said_kinds = {}
        for part in detail.split("; "):
            (kind, total), *two_role = PERCENT.findall(part)
            said_kinds[kind] = int(total)
            own = int(total) - sum(int(percent) for _, percent in two_role)
            assert abs(own - means[kind]) < 1, (phase, kind, own, means[kind])
            for name, percent in two_role:
                assert name == f"{kind}+query" and abs(int(percent) - means[name]) < 1, (phase, part, means)
        for name, mean in means.items():
            if "+" in name and f"{name} " not in detail:
                assert mean < 1, (phase, name, mean, reading)  # only an empty two-role stack goes unnamed
        assert set(said_kinds) == {name.partition("+")[0] for name in stacks} and sum(said_kinds.values()) == 100
        lead = [word for word in re.split(r"[ ,]+", reading.split(" words")[0]) if word in said_kinds]
        assert lead and all(said_kinds[kind] == max(said_kinds.values()) for kind in lead), (reading, said_kinds)
        assert ("equally" in reading.split(" words")[1][:9]) == (len(lead) > 1), reading
        assert reading.startswith("mostly") == (len(lead) == 1 and said_kinds[lead[0]] > 50), reading
        if not ceiling[rows].any():
            assert "attribution" not in reading, reading
            continue
        full = [i for i in rows if answer[i] >= ceiling[i] - 1e-6 and ceiling[i] < 100]
        bound = CEILING.search(reading)
        assert bool(bound) == bool(full), (phase, reading, full)
        if bound:
            low, high, filled, of = bound.groups()
            assert (int(low), int(high or low)) == (round(ceiling[rows].min()), round(ceiling[rows].max()))
            assert (int(filled), int(of)) == (len(full), len(rows)), (reading, full, rows)
        (held,) = HOLDS.findall(reading)
        assert abs(float(held) - attribution[rows].mean()) < (0.1 if "." in held else 1), (reading, attribution)


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
