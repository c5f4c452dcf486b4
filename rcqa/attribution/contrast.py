"""Contrastive targets: why the explained span and not the foil.

F = log p(span) − log p(foil), both log-probabilities from the softmax over every window's spans (rcqa.spans), so
the normaliser cancels and F = (start + end logit of the span) − (start + end logit of the foil), each read in its
own window. The explanation is taken at the span's window: when the foil lies in another window, its logits do not
depend on that window's states, so its term is a constant there. The gradient then explains the span's side alone,
and completeness still holds, F(input) − F(baseline) with the foil's term unchanged. Explaining the foil's window
too is the whole-passage explanation's job.
"""
from __future__ import annotations

from collections.abc import Callable

import torch

from rcqa.types.settings import FoilSpec
from rcqa.attribution.targets import Target, TargetError
from rcqa.qa import char_span_to_tokens
from rcqa.spans import NULL_TOKEN, Windows, answer_standing, decode, null_scores
from rcqa.text import is_quantifier_question, written_words
from rcqa.types import Answer, Example, Foil, Span, overlaps


RUNNER_UP_SEARCH = 200  # answers searched for a runner-up when every n-best span overlaps the explained one


class NoFoil(TargetError):
    """The example has no such foil (a runner-up, a distractor number): a dataset run records why and skips it."""


def find_foil(foil: FoilSpec, logits: tuple[torch.Tensor, torch.Tensor], example: Example, answer: Answer,
              windows: Windows, span: tuple[int, int, int]) -> Foil:
    """The foil a FOIL names for the explained span (window, start token, end token), scored on every window's
    start and end logits (windows × tokens: those the answer was decoded from, rcqa.qa.answer_with_logits, so that
    a contrast runs no window again). A foil may overlap the span (a boundary contrast: "3,750" against "holds
    3,750", where the start and end were decided). TargetError, in one sentence, where the foil does not exist or is
    the span itself; NoFoil where the example has no runner-up or no other number."""
    window, start_token, end_token = span
    chars = windows.offsets[window][start_token][0], windows.offsets[window][end_token][1]
    if foil.kind in ("nbest", "runner-up"):
        found = _nbest_foil(foil, answer, chars, lambda: decode(*logits, windows, example.passage, RUNNER_UP_SEARCH))
    else:
        found = _scored_foil(foil, logits, example, answer, windows, window, chars)
    if (found.start_char, found.end_char) == chars:  # an overlapping foil is a boundary contrast, and stays
        raise TargetError(f"the foil {found.text!r} ({foil}) is the explained span itself; a contrast needs two "
                         "different spans")
    return found


def contrast_target(foil: Foil, window: int, start_token: int, end_token: int) -> Target:
    """The contrast at the explained span: the foil's logits read in the window when it lies there, else its score."""
    if foil.window == window:
        return Target("contrast", start_token, end_token, foil_start_token=foil.start_token,
                      foil_end_token=foil.end_token)
    return Target("contrast", start_token, end_token, foil_score=foil.score)


def _nbest_foil(foil: FoilSpec, answer: Answer, chars: tuple[int, int], wider: Callable[[], list[Span]]) -> Foil:
    """The foil's rank-th n-best span, or (a runner-up, which has no rank) the best one that does not overlap the characters: in the n-best
    list, else among the wider list of answers (often every n-best span extends the answer: "in 1872", "1872")."""
    rank = foil.rank
    if rank is None:
        chosen = next((s for s in answer.nbest if not s.overlaps(*chars)), None)
        chosen = chosen or next((s for s in wider() if not s.overlaps(*chars)), None)
        if chosen is None:
            raise NoFoil(f"none of the {RUNNER_UP_SEARCH} most probable answers stays clear of the explained span")
    elif rank >= len(answer.nbest):
        raise TargetError(f"there are only {len(answer.nbest)} candidate spans; {foil} does not exist")
    else:
        chosen = answer.nbest[rank]
    return Foil(foil.to_string(), chosen.text, chosen.start_char, chosen.end_char, chosen.window, chosen.start_token,
                chosen.end_token, chosen.score, chosen.probability)


def _scored_foil(foil: FoilSpec, logits: tuple[torch.Tensor, torch.Tensor],
                 example: Example, answer: Answer, windows: Windows, window: int, chars: tuple[int, int]) -> Foil:
    """A foil scored from every window's logits: "no answer", the gold answer, a text or a distractor number."""
    start_logits, end_logits = logits
    kind, argument = foil.kind, foil.text
    if kind == "null":
        null = null_scores(start_logits, end_logits).min(0)
        probability = answer.no_answer.probability if answer.no_answer else None
        return Foil(foil.to_string(), "", None, None, int(null.indices), NULL_TOKEN, NULL_TOKEN, float(null.values), probability)
    candidates = _candidates(kind, argument, example, chars)
    placed = [(place, start_char, end_char) for start_char, end_char in candidates
              if (place := _place(windows, start_char, end_char, window, exact=kind == "text"))]
    if not placed:
        raise TargetError(_unplaced(kind, argument, bool(candidates)))

    def score(place: tuple[int, int, int]) -> float:
        return float(start_logits[place[0], place[1]] + end_logits[place[0], place[2]])

    place, start_char, end_char = max(placed, key=lambda found: score(found[0]))  # the first of equal scores
    probability = answer_standing(start_logits, end_logits, windows, example.passage, place)[1]
    return Foil(foil.to_string(), example.passage[start_char:end_char], start_char, end_char, *place, score(place), probability)


def _candidates(kind: str, argument: str | None, example: Example, chars: tuple[int, int]) -> list[tuple[int, int]]:
    """[start_char, end_char) of each place the foil may be, in text order: for a text, each place but the explained
    span itself (one overlapping it is a boundary contrast); for a number, those clear of the span (a distractor is
    another number); a gold answer that is the span is refused by the caller."""
    passage = example.passage
    if kind == "gold":
        if not example.answers or example.answers[0].start_char < 0:
            raise TargetError("this example has no gold answer with a position in the passage")
        gold = example.answers[0]
        return [(gold.start_char, gold.start_char + len(gold.text))]
    if kind == "text":
        assert argument is not None  # FoilSpec.parse gives every "text" foil its text
        found = [(i, i + len(argument)) for i in _occurrences(passage, argument)]
        other = [place for place in found if place != chars]
        if found and not other:
            raise TargetError(f"{argument!r} occurs only as the explained span itself; a contrast needs another span")
        return other
    if not is_quantifier_question(example.question):
        raise NoFoil("not a quantifier question (no 'how many' / 'how much'): it has no distractor number")
    numbers = [(w.start_char, w.end_char) for w in written_words(passage)
               if w.is_number and not overlaps(*chars, w.start_char, w.end_char)]
    if not numbers:
        raise NoFoil("the passage has no number besides the explained span")
    return numbers


def _occurrences(passage: str, text: str) -> list[int]:
    starts, at = [], passage.find(text)
    while at >= 0:
        starts.append(at)
        at = passage.find(text, at + 1)
    return starts


def _place(windows: Windows, start_char: int, end_char: int, prefer: int,
           exact: bool) -> tuple[int, int, int] | None:
    """(window, start token, end token) of the passage tokens covering the characters (exact: starting and ending
    at them, as a text foil must; a window cuts a passage into the same tokens as any other that holds them): in
    the explained window when it holds them, else the first that does; None where no window does."""
    place = char_span_to_tokens(windows, start_char, end_char, prefer=prefer)
    if place is None or not exact:
        return place
    offsets = windows.offsets[place[0]]
    return place if (offsets[place[1]][0], offsets[place[2]][1]) == (start_char, end_char) else None


def _unplaced(kind: str, argument: str | None, found: bool) -> str:
    if kind == "gold":
        return "the gold answer does not fit in any window of the passage"
    if kind != "text":
        return "no other number of the passage fits in a window"
    assert argument is not None  # FoilSpec.parse gives every "text" foil its text
    if not found:
        return f"{argument[:60]!r} does not occur in the passage as written (the match is exact, case included)"
    return (f"{argument[:60]!r} starts or ends inside a word-piece of the model's tokens; give whole tokens "
            f"(e.g. whole words)")
