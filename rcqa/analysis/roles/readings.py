"""The roles in plain words: what leads the top-k words of each third of the layers, and what the answer's words do
there (RoleNumbers read as sentences)."""
from __future__ import annotations

import numpy as np

from rcqa.analysis.roles.shares import RoleNumbers, kind_of, kind_share


def phase_readings(layers: list[str], numbers: RoleNumbers, abstention: bool = False) -> list[tuple[str, str]]:
    """Split the layers into early / middle / late thirds and say in plain words what leads each.

    The lead is the kind of word most of the phase's top-k words are, from the roles chart's stacks (their means
    over the phase's layers, as whole percents that add up to 100): a two-role stack ("supporting+query") counts for
    its first role, beside which the chart draws it, and is named within it where its whole percent is above 0.
    "Mostly" means more than half; kinds level at the shown whole percent are said to be level. Then the answer's
    ceiling, where it binds (at some layer the answer's words fill every top-k place they can, fewer than k), and
    the answer's share of the attribution (what the heatmap shows), beside its share of the passage's words. For a
    target that explains "no answer" (explains_abstention) the answer is the best span weighed against it."""
    bounds = np.array_split(np.arange(len(layers)), 3)
    meaning = _meanings(abstention)
    readings = []
    for name, indices in zip(("Early", "Middle", "Late"), bounds):
        if not len(indices):
            continue
        phase = f"{name} ({_layer_span(layers, indices)})"
        defined = [i for i in indices if not np.isnan(numbers.ceiling[i])]
        if not defined:
            readings.append((phase, "no layer here has any top word."))
            continue
        stacks = whole_percents({role: float(values[defined].mean()) for role, values in numbers.top.items()})
        kinds: dict[str, int] = {}
        for stack, percent in stacks.items():
            kinds[kind_of(stack)] = kinds.get(kind_of(stack), 0) + percent
        detail = "; ".join(_kind_detail(kind, total, stacks) for kind, total in kinds.items())
        level = [kind for kind, total in kinds.items() if total == max(kinds.values())]
        why = "; ".join(_meaning(meaning, kind, kinds[kind], stacks) for kind in level)
        if len(level) > 1:
            lead = f"{', '.join(level[:-1])} and {level[-1]} words equally"
        else:
            lead = f"mostly {level[0]} words" if kinds[level[0]] > 50 else f"more {level[0]} words than any other kind"
        answer = _answer_sentence(numbers, defined, abstention, "shared" in numbers.top)
        readings.append((phase, f"{lead} in the top-{numbers.k} ({detail}): {why}.{answer}"))
    return readings


def _kind_detail(kind: str, total: int, stacks: dict[str, int]) -> str:
    """'supporting 40%', with its two-role stack where that is above 0: 'supporting 40%, of which supporting+query
    10%'."""
    part = stacks.get(f"{kind}+query", 0)
    return f"{kind} {total}%" + (f", of which {kind}+query {part}%" if part else "")


def _meaning(meaning: dict[str, str], kind: str, total: int, stacks: dict[str, int]) -> str:
    """What a layer is doing whose top words are mostly of a kind; where most of them are also the question's
    words, it does so in the question's words."""
    asked = 2 * stacks.get(f"{kind}+query", 0) > total
    return meaning[kind] + (", mostly in words the question shares" if asked else "")


def _answer_sentence(numbers: RoleNumbers, defined: list[int], abstention: bool, boundary: bool) -> str:
    """The answer's ceiling in the phase's top-k where it binds, and its share of the attribution beside its share
    of the passage's words (nothing where the passage holds no word of it)."""
    count = numbers.answer_words
    if not count:
        return ""
    words = f"{count} word{'s' * (count != 1)}"
    owner = f"The {'best span' if abstention else 'answer'}'s {words}{' outside the foil' * boundary}"
    answer_top = kind_share(numbers.top, "answer")[defined]
    ceiling = numbers.ceiling[defined]
    full = int(((answer_top >= ceiling - 1e-9) & (ceiling < 100)).sum())
    attribution = float(kind_share(numbers.attribution, "answer")[defined].mean())
    of_layer = "the layer's attribution" if len(defined) == 1 else "each layer's attribution on average"
    share = (f"{'is' if count == 1 else 'are'} {_percent(100 * count / numbers.passage_words)} of the passage's "
             f"words and hold{'s' * (count == 1)} {_percent(attribution)} of {of_layer}.")
    if not full:
        return f" {owner} {share}"
    low, high = round(float(ceiling.min())), round(float(ceiling.max()))
    most = f"{low}%" if low == high else f"{low}–{high}%"
    return (f" {owner} can fill at most {most} of the top-{numbers.k}, and {'does' if count == 1 else 'do'} so at "
            f"{full} of {len(defined)} layer{'s' * (len(defined) != 1)} here; {'it' if count == 1 else 'they'} {share}")


def _percent(value: float) -> str:
    """A whole percent, or a tenth under 1 %, where a whole percent would read 0 % of a share that is not 0."""
    return f"{value:.0f}%" if value >= 1 or value == 0 else f"{value:.1f}%"


def _meanings(abstention: bool) -> dict[str, str]:
    """What a layer is doing whose top words are mostly of a kind."""
    meaning = {"query": "matching the question's words in the passage",
               "supporting": "reading the context around the answer",
               "answer": "settling on and verifying the answer",
               "foil": "weighing the foil the answer is set against",
               "shared": "weighing the words the answer and the foil share",
               "other": "spread over words that are neither the answer, its context nor the question's"}
    if abstention:
        meaning |= {"supporting": "reading the context around the best span",
                    "answer": "weighing the best span against \"no answer\""}
    return meaning


def whole_percents(shares: dict[str, float]) -> dict[str, int]:
    """Shares that add up to 100, as whole percents that still do (largest remainders round up), so that a reading
    never lists 101 %."""
    floors = {name: int(np.floor(value)) for name, value in shares.items()}
    missing = round(sum(shares.values())) - sum(floors.values())
    for name in sorted(shares, key=lambda name: floors[name] - shares[name])[:max(missing, 0)]:
        floors[name] += 1
    return floors


def _layer_span(layers: list[str], indices: np.ndarray) -> str:
    return layers[indices[0]] if len(indices) == 1 else f"{layers[indices[0]]}–{layers[indices[-1]]}"
