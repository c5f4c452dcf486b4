"""The paper's categories of passage words: the answer (the explained span), its supporting words (SUPPORT_WINDOW
either side) and the query's words (the question's, stopwords left out); a contrast's foil and the words it shares
with the answer; and the names each is shown under."""
from __future__ import annotations

import numpy as np

from rcqa.types import Attribution, overlaps


SUPPORT_WINDOW = 5  # words either side of the answer span (the paper's supporting words)
CATEGORIES = ("answer", "supporting", "query")
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
