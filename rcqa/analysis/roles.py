"""What each layer attends to: the paper's answer / supporting / query categories among its top-k
passage words, quantifier questions, and a plain-words reading of the phases."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rcqa.analysis.registry import Analysis, Inputs, json_list
from rcqa.analysis.words import is_empty, top_k
from rcqa.text import NUMBER_TAG, is_quantifier_question
from rcqa.types import Attribution, Word, overlaps

SUPPORT_WINDOW = 5  # words either side of the answer span (the paper's supporting words)
CATEGORIES = ("answer", "supporting", "query")
# per layer, the answer's share of the attribution and the most of the top-k its words can fill (RoleShares)
ANSWER_MEASURES = ("answer_attribution", "answer_ceiling")
BOUNDARY_LABELS = {"answer": "answer only", "foil": "foil only", "shared": "shared (in the answer and the foil)"}

# the common English stopword list (NLTK's), used to keep function words out of "query words"
STOPWORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these
those am is are was were be been being have has had having do does did doing a an the and but if
or because as until while of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where
why how all any both each few more most other some such no nor not only own same so than too very s
t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma
mightn mustn needn shan shouldn wasn weren won wouldn
""".split())


def normalise(text: str) -> str:
    return text.lower().strip()


def explained_span_mask(result: Attribution, target: int = 0) -> np.ndarray:
    """Per passage word: inside the span the target explains (the prediction by default, as in the paper; the gold
    answer or an n-best span when those are explained)."""
    span_start, span_end = result.explained_span(target)
    return np.array([overlaps(span_start, span_end, w.start_char, w.end_char) for w in result.passage_words()],
                    dtype=bool)


def category_masks(result: Attribution, target: int = 0) -> dict[str, np.ndarray]:
    """Per passage word: inside the explained span; within 5 words of it; a non-stopword of the question; and, for a
    contrast whose foil is a span, inside the foil (the window's words only: a foil in another window has none here).

    A boundary contrast, whose foil overlaps the span ("3,750" against "holds 3,750"), splits the two: "answer" is
    then the span's words outside the foil, "foil" the foil's outside the span, and "shared" the words of both.
    Punctuation is no word, so it neither counts nor widens the window."""
    passage = result.passage_words()
    answer = explained_span_mask(result, target)
    inside = np.flatnonzero(answer)
    supporting = np.zeros(len(passage), dtype=bool)
    if inside.size:
        first, last = inside[0], inside[-1]
        supporting[max(0, first - SUPPORT_WINDOW):first] = True
        supporting[last + 1:last + 1 + SUPPORT_WINDOW] = True
    question = {normalise(w.text) for w in result.words if w.segment == "question" and not w.is_punctuation}
    question -= STOPWORDS
    query = np.array([normalise(w.text) in question for w in passage], dtype=bool)
    masks = {"answer": answer, "supporting": supporting, "query": query}
    if (foil := foil_chars(result, target)) is not None:
        in_foil = np.array([overlaps(*foil, w.start_char, w.end_char) for w in passage], dtype=bool)
        masks["foil"] = in_foil
        if (answer & in_foil).any():
            masks |= {"answer": answer & ~in_foil, "foil": in_foil & ~answer, "shared": answer & in_foil}
    return masks


def foil_chars(result: Attribution, target: int = 0) -> tuple[int, int] | None:
    """[start_char, end_char) of the contrast's foil; None for another target, or for the foil "no answer"."""
    foil = result.targets[target].foil
    if foil is None or foil.start_char is None or foil.end_char is None:
        return None
    return foil.start_char, foil.end_char


def boundary_contrast(result: Attribution, target: int = 0) -> bool:
    """Whether the target is a contrast whose foil overlaps the explained span (where its start and end were
    decided: "3,750" against "holds 3,750")."""
    foil = foil_chars(result, target)
    return foil is not None and overlaps(*result.explained_span(target), *foil)


def explains_abstention(result: Attribution, target: int = 0) -> bool:
    """Whether the target explains "no answer" (null, answer_vs_null): its span is the best span, rejected or not."""
    return result.targets[target].explains_null


def category_labels(result: Attribution, target: int = 0) -> dict[str, str]:
    """The name each category is shown under: for a null target there is no answer span, so the best span the
    model weighed against "no answer" takes the answer category, and says so; a boundary contrast names its three
    parts of the two spans."""
    if not explains_abstention(result, target):
        masks = category_masks(result, target)
        return {c: c for c in masks} | (BOUNDARY_LABELS if "shared" in masks else {})
    span = "the rejected best span" if result.answer.abstained else "the best span, chosen over no answer"
    return {"answer": f"answer ({span})", "supporting": "supporting (around that span)", "query": "query"}


def word_categories(result: Attribution, target: int = 0) -> list[str]:
    """One label per passage word for display: 'answer', 'supporting', 'query', 'answer+query', 'foil', 'shared'
    (a boundary contrast's words in both spans), or ''."""
    masks = category_masks(result, target)
    return ["+".join(c for c in masks if masks[c][i]) for i in range(len(result.passage_words()))]


def shares_of_top(top: list[np.ndarray], mask: np.ndarray) -> np.ndarray:
    """Per layer, the % of its top words that the mask marks; NaN for a layer with no top words."""
    return np.array([100 * mask[row].sum() / len(row) if len(row) else np.nan for row in top])


def category_shares(result: Attribution, distribution: np.ndarray, k: int = 5, target: int = 0) -> dict[str, np.ndarray]:
    """Per layer, the % of its top-k passage words in each category (a word may count in two)."""
    top = top_k(distribution, k)
    return {name: shares_of_top(top, mask) for name, mask in category_masks(result, target).items()}


def quantifier_share(result: Attribution, distribution: np.ndarray, k: int = 5, target: int = 0) -> np.ndarray | None:
    """Per layer, (numbers among the top-k, less one if one is in the explained span) / numbers in the passage,
    in %; NaN for a layer with no top words. Numbers are the words tagged CD. None unless the question is a
    quantifier question over a passage with at least two numbers."""
    numbers = np.array([w.tag == NUMBER_TAG for w in result.passage_words()], dtype=bool)
    if not is_quantifier_question(result.example.question) or numbers.sum() < 2:
        return None
    in_span = numbers & explained_span_mask(result, target)
    counts = [numbers[row].sum() - in_span[row].any() if len(row) else np.nan for row in top_k(distribution, k)]
    return 100 * np.array(counts, dtype=float) / numbers.sum()


def other_number_share(result: Attribution, distribution: np.ndarray, k: int = 5, target: int = 0) -> np.ndarray | None:
    """Per layer, the % of its top-k passage words that are numbers (tagged CD) outside both the explained span and
    the contrast's foil: the paper's "other numbers" with the two numbers the contrast itself names taken out, so
    that their share cannot come from the target by construction. None unless the target is a contrast whose foil
    is a span."""
    masks = category_masks(result, target)
    if "foil" not in masks:
        return None
    numbers = np.array([w.tag == NUMBER_TAG for w in result.passage_words()], dtype=bool)
    return shares_of_top(top_k(distribution, k), numbers & ~explained_span_mask(result, target) & ~masks["foil"])


SPAN_PAIR = ("foil", "shared")  # a contrast's categories, named only for one (shared: one whose foil overlaps the span)
# the roles chart's stacks, each word in one: a word in two roles is in the stack that names both ("supporting+query")
ROLE_STACKS = ("answer", "answer+query", "supporting", "supporting+query", "query", *SPAN_PAIR, "other")


def exclusive_labels(result: Attribution, target: int = 0) -> list[str]:
    """One label per passage word, each word counted once: 'foil' or 'shared' whatever else it is, else 'answer',
    'answer+query', 'supporting', 'supporting+query', 'query' or 'other'. These are the roles chart's stacks."""
    return [next((name for name in SPAN_PAIR if name in labels.split("+")), labels or "other")
            for labels in word_categories(result, target)]


def kind_of(stack: str) -> str:
    """The kind of word a roles chart's stack holds: a two-role stack ("supporting+query") belongs to its first
    role, beside whose own stack the chart draws it, so a supporting word is counted as one whether or not the
    question shares it."""
    return stack.partition("+")[0]


def kind_share(shares: dict[str, np.ndarray], kind: str) -> np.ndarray:
    """Per layer, the sum of the stacks of one kind (the answer: 'answer' and 'answer+query')."""
    return sum((values for stack, values in shares.items() if kind_of(stack) == kind),
               np.zeros(len(next(iter(shares.values())))))


def _stacks(kinds: np.ndarray) -> list[str]:
    """ROLE_STACKS, a contrast's only where some passage word is in them."""
    return [role for role in ROLE_STACKS if role not in SPAN_PAIR or (kinds == role).any()]


def reading_shares(labels: list[str], top: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Per layer, the % of its top words in each of ROLE_STACKS, from the exclusive labels: the numbers the roles
    chart stacks (a query word in the answer counts as 'answer+query', in neither 'answer' nor 'query'), so they add
    up to 100 %. A contrast's stacks are there only where some passage word is in them."""
    kinds = np.array(labels)
    return {role: shares_of_top(top, kinds == role) for role in _stacks(kinds)}


def attribution_shares(labels: list[str], distribution: np.ndarray) -> dict[str, np.ndarray]:
    """Per layer, the % of its attribution over the passage's words that falls on each stack's words: the heatmap's
    shares (passage words only) summed by stack, so they add up to 100 %; NaN for a layer with no attribution."""
    kinds = np.array(labels)
    empty = is_empty(distribution)
    return {role: np.where(empty, np.nan, 100 * distribution[:, kinds == role].sum(axis=1))
            for role in _stacks(kinds)}


def answer_ceiling(answer_words: int, top: list[np.ndarray]) -> np.ndarray:
    """Per layer, the largest % of its top words the answer's words can be: their count over the layer's top words,
    at most 100 %; NaN for a layer with no top words. A 2-word answer fills at most 40 % of a top-5."""
    return np.array([min(100.0, 100 * answer_words / len(row)) if len(row) else np.nan for row in top])


@dataclass(frozen=True)
class RoleNumbers:
    """Per layer, what the roles chart draws and its reading reads: the % of the top-k words in each stack (`top`),
    the % of the layer's passage attribution on each stack's words (`attribution`), and the answer's ceiling in the
    top-k; with the answer's and the passage's word counts and k."""

    top: dict[str, np.ndarray]
    attribution: dict[str, np.ndarray]
    ceiling: np.ndarray
    answer_words: int
    passage_words: int
    k: int


def role_numbers(result: Attribution, distribution: np.ndarray, k: int = 5, target: int = 0) -> RoleNumbers:
    """The roles of one target's top-k words and attribution, per layer (see RoleNumbers)."""
    labels = exclusive_labels(result, target)
    top = top_k(distribution, k)
    answer_words = sum(kind_of(label) == "answer" for label in labels)
    return RoleNumbers(reading_shares(labels, top), attribution_shares(labels, distribution),
                       answer_ceiling(answer_words, top), answer_words, len(labels), k)


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


def top_words(result: Attribution, distribution: np.ndarray, k: int = 5) -> list[list[Word]]:
    passage = result.passage_words()
    return [[passage[i] for i in row] for row in top_k(distribution, k)]


@dataclass(frozen=True)
class RoleShares:
    """The roles analysis of one target: per category the % of each layer's top-k words (None where a layer has no
    top word), the name each category is shown under, the phases in plain words, the quantifier share (None
    unless a quantifier question, see quantifier_share), and per layer the answer's share of the attribution and its
    ceiling in the top-k (None where a layer has no top word; None throughout in a document written before them)."""

    categories: dict[str, list]
    category_labels: dict[str, str]
    phases: list[dict]  # {"layers": "L1–L4", "reading": "…"} per third of the layers
    quantifier_share: list | None
    answer_attribution: list | None = None
    answer_ceiling: list | None = None

    def to_dict(self) -> dict:
        return {"categories": self.categories, "category_labels": self.category_labels, "phases": self.phases,
                "quantifier_share": self.quantifier_share, "answer_attribution": self.answer_attribution,
                "answer_ceiling": self.answer_ceiling}

    @classmethod
    def from_dict(cls, document: dict) -> RoleShares:
        return cls(document["categories"], document["category_labels"], document["phases"],
                   document["quantifier_share"], document.get("answer_attribution"), document.get("answer_ceiling"))

    def row(self) -> dict:
        return {**{f"category_{c}": self.categories[c] for c in CATEGORIES}, "quantifier_share": self.quantifier_share,
                "answer_attribution": self.answer_attribution, "answer_ceiling": self.answer_ceiling}


def role_shares(inputs: Inputs) -> RoleShares:
    result, target, k = inputs.result, inputs.target, inputs.k
    quantifier = quantifier_share(result, inputs.distribution, k, target)
    numbers = role_numbers(result, inputs.distribution, k, target)
    phases = phase_readings(result.layers, numbers, explains_abstention(result, target))
    return RoleShares({name: json_list(values, 2)
                       for name, values in category_shares(result, inputs.distribution, k, target).items()},
                      category_labels(result, target), [{"layers": span, "reading": text} for span, text in phases],
                      None if quantifier is None else json_list(quantifier, 2),
                      json_list(kind_share(numbers.attribution, "answer"), 2), json_list(numbers.ceiling, 2))


ROLES = Analysis("roles", "What each layer's top words are", "the % of each layer's top-k words that are answer, supporting and query words (and a "
                 "contrast's foil), the phases in plain words, the quantifier share, the answer's share of each "
                 "layer's attribution and its ceiling in the top-k", role_shares, RoleShares,
                 {**{f"category_{c}": "per_layer" for c in CATEGORIES}, "quantifier_share": "per_layer",
                  **{name: "per_layer" for name in ANSWER_MEASURES}})
