"""The model's answer: the passage with the answer and gold marked, a summary with EM / F1, the n-best table."""
from __future__ import annotations

import itertools
import re

import pandas as pd

from rcqa.evaluate import score
from rcqa.figures.common import FONT, escape_text, null_decision
from rcqa.text import WrittenWord, shortened, written_words
from rcqa.types import NULL_TARGETS, Answer, Example, Foil

LONG_PASSAGE_WORDS = 300  # a passage longer than this is shown in a box of its own height, which scrolls
LONG_PASSAGE_CHARS = 3_000  # so is one of fewer, longer words: a 20,000-character word wraps into 250 lines
PASSAGE_BOX = "max-height: 24em; overflow-y: auto; border: 1px solid #ddd; border-radius: 4px; padding: 0.5em;"
WRAPPED = "overflow-wrap: anywhere;"  # a word wider than its column breaks, rather than widening the page
# a long passage whose answer starts past OPEN_AT_CHARS (about the box's height) opens at it, with up to
# CONTEXT_CHARS of its line before it; the words before that are folded above, a click away
OPEN_AT_CHARS, CONTEXT_CHARS = 1_200, 300
ANSWER_CHARS = 200  # of an answer shown in the summary's headline

FOIL_MARK = "outline: 2px dashed #1f77b4; outline-offset: 1px;"  # the contrast's foil, in every passage drawn

# what every answered summary says (after its probability): how a benchmark and the server's timing
# (rcqa.ui.page_timing) know the answer was sent
ANSWER_MARK = "among every valid span of the passage"


def answer_passage(example: Example, answer: Answer, foil: Foil | None = None) -> str:
    """The passage as escaped HTML with the predicted answer highlighted, the gold answer underlined and, for a
    contrast, its foil (as the explanation placed it) outlined."""
    marks: list[tuple[int, int, str]] = []
    if answer.best:
        marks.append((answer.best.start_char, answer.best.end_char, "predicted"))
    marks += [(g.start_char, g.start_char + len(g.text), "gold") for g in example.answers if g.start_char >= 0]
    if foil is not None and foil.start_char is not None and foil.end_char is not None:
        marks.append((foil.start_char, foil.end_char, "foil"))
    long = _is_long(example.passage)
    fold = _fold_at(example.passage, answer) if long else 0
    boundaries = sorted({0, fold, len(example.passage), *(p for s, e, _ in marks for p in (s, e))})
    folded: list[str] = []
    shown: list[str] = []
    for start, end in itertools.pairwise(boundaries):
        text = escape_text(example.passage[start:end])
        kinds = {kind for s, e, kind in marks if s <= start and end <= e}
        if "gold" in kinds:
            text = f'<span style="border-bottom: 3px solid #2ca02c;">{text}</span>'
        if "predicted" in kinds:
            text = f'<mark style="background: rgba(214, 39, 40, 0.25); padding: 1px 0;">{text}</mark>'
        if "foil" in kinds:
            text = f'<span style="{FOIL_MARK}">{text}</span>'
        (folded if start < fold else shown).append(text)
    marked = "the best span, which the model rejected for “no answer”" if answer.abstained else "the model\'s answer"
    note = _long_passage(example.passage, answer, fold) if long else ""
    legend = (f'<p style="font-size: 0.85em; color: #555;">{note}Highlighted: {marked}'
              + (". Underlined in green: the gold answer" if example.answers else "")
              + (f". Outlined in blue: the contrast's foil “{escape_text(foil.text)}”"
                 if foil is not None and foil.start_char is not None else "") + ".</p>")
    box = PASSAGE_BOX if long else ""
    before = (f'<details><summary style="cursor: pointer; color: #555; font-size: 0.85em;">The passage\'s first '
              f"{_words_before(example.passage, fold):,} words, before the answer: click to show them</summary>"
              f'{"".join(folded)}</details>' if folded else "")
    return f'<div style="{FONT} white-space: pre-wrap; {WRAPPED} {box}">{before}{"".join(shown)}</div>{legend}'


def passage_words(passage: str) -> list[WrittenWord]:
    """The passage's words as every page counts them: words as written (rcqa.text), punctuation no word; the
    heatmap's columns and "One word across layers" number these."""
    return [word for word in written_words(passage) if not word.is_punctuation]


def _words_before(passage: str, char: int) -> int:
    return sum(1 for word in passage_words(passage) if word.start_char < char)


def _is_long(passage: str) -> bool:
    """Shown in a scrolling box, so that the controls below stay in view."""
    return len(passage) > LONG_PASSAGE_CHARS or len(passage_words(passage)) > LONG_PASSAGE_WORDS


def _fold_at(passage: str, answer: Answer) -> int:
    """Where a long passage's box opens: where the answer's line starts, or the word starting at most CONTEXT_CHARS
    before the answer, whichever is later; 0 (the passage's start) for an answer within its first OPEN_AT_CHARS."""
    if answer.best is None or answer.best.start_char <= OPEN_AT_CHARS:
        return 0
    start = answer.best.start_char
    line = passage.rfind("\n", 0, start) + 1
    if start - line <= CONTEXT_CHARS:
        return line
    space = re.compile(r"\s").search(passage, start - CONTEXT_CHARS, start)
    return space.end() if space else start


def _long_passage(passage: str, answer: Answer, fold: int) -> str:
    """How long a long passage is, in the words every page counts (passage_words), where in it the highlighted span
    starts, and that its box opens there where the words before are folded."""
    where = (f", the highlighted span at word {_words_before(passage, answer.best.start_char) + 1:,}"
             if answer.best else "")
    opens = " It opens at the span; the words before it are folded above it." if fold else ""
    words = len(passage_words(passage))
    return f"A long passage ({words:,} word{'s' * (words != 1)}{where}): scroll in its box to read it.{opens} "


def answer_summary(example: Example, answer: Answer, target: str | None = None) -> str:
    """The answer, its probability, the gold answers with EM / F1, and honesty about unanswerable questions; for an
    abstention, the targets that explain it, unless `target`, the one in force, is one of them."""
    best = answer.best
    if answer.abstained:
        return _abstention(example, answer, target)
    if best is None:
        return "<p>The model found no span to answer with.</p>"
    parts = [f'<div style="font-size: 1.25em; font-weight: 600; {WRAPPED}">{_headline(best.text)}</div>',
             f"<p>probability {percent(best.probability)} {ANSWER_MARK}"
             + (f" · from window {best.window + 1} of {answer.n_windows}" if answer.n_windows > 1 else "") + "</p>"]
    golds = [g.text for g in example.answers]
    if golds:
        exact, f1 = score(best.text, golds)
        parts.append(f"<p style=\"{WRAPPED}\">Gold: {' | '.join(_headline(g) for g in dict.fromkeys(golds))} · "
                     f"exact match {exact:.0f} · F1 {f1:.2f}</p>")
    if answer.no_answer is not None:
        parts.append(f"<p>It could have said “no answer” (probability {percent(answer.no_answer.probability)}). "
                     f"{escape_text(null_decision(answer))}</p>")
    if example.is_impossible and answer.no_answer is None:
        parts.append('<p style="background: #fff3cd; padding: 8px; border-radius: 4px;"><strong>No answer in the '
                     "passage.</strong> This question cannot be answered from the passage, but an extractive model "
                     f"must still point at a span: its best guess has probability {percent(best.probability)}. "
                     "The attributions below explain that guess, not an answer.</p>")
    return "".join(parts)


def _headline(text: str) -> str:
    """An answer as the summary shows it, escaped: up to ANSWER_CHARS characters, and how long a longer one is
    (the passage box shows it whole)."""
    if len(text) <= ANSWER_CHARS:
        return escape_text(text)
    return f"{escape_text(shortened(text, ANSWER_CHARS))} ({len(text):,} characters)"


def _abstention(example: Example, answer: Answer, target: str | None) -> str:
    """What a model that abstained says: no answer, how sure, the best span it rejected, and, unless the target in
    force explains the abstention already, which targets do."""
    null, best = answer.no_answer, answer.best
    assert null is not None  # drawn only for an answer that abstained
    parts = ['<div style="font-size: 1.25em; font-weight: 600;">No answer: the model abstains</div>',
             f"<p>probability of “no answer” {percent(null.probability)}. {escape_text(null_decision(answer))}</p>"]
    if best:
        advice = ("" if target in NULL_TARGETS else " The explanations below can explain the abstention: choose "
                  "the target <em>null</em> or <em>answer_vs_null</em>.")
        parts.append(f"<p style=\"{WRAPPED}\">The best span it rejected: “{_headline(best.text)}” (probability "
                     f"{percent(best.probability)}).{advice}</p>")
    golds = [g.text for g in example.answers]
    if golds and not example.is_impossible:
        parts.append(f"<p style=\"{WRAPPED}\">Gold: {' | '.join(_headline(g) for g in dict.fromkeys(golds))} · "
                     "exact match 0 · F1 0</p>")
    elif example.is_impossible:
        parts.append("<p>The question has no answer in the passage: abstaining is right.</p>")
    return "".join(parts)


def nbest_html(answer: Answer, height_px: int = 250) -> str:
    """The n-best table (nbest_table) as an escaped HTML table that scrolls past height_px. It fits the narrow column
    beside the passage: every answer shows whole, wrapped over lines where it is long (the numbers stay on one
    line), with its characters in the passage on hover."""
    table = nbest_table(answer)
    table.insert(3, "start / end logit", [_logits(row) for row in table.to_dict("records")])
    cell = "padding: 2px 4px; border: none; border-bottom: 1px solid #e6e6e6; vertical-align: top; "
    style = {name: cell + ("white-space: nowrap; text-align: right;" if name != "answer" else
                           "text-align: left; min-width: 6em; overflow-wrap: anywhere;")
             for name in table.columns if name not in ("characters", "start logit", "end logit", "null score")}
    shown = {"probability": percent}
    header = "".join(f'<th style="{style[name]}">{escape_text(name)}</th>' for name in style)

    def row_html(row: dict) -> str:
        where = f"characters {row['characters']}: " if row["characters"] else ""
        return "<tr>" + "".join(
            f'<td style="{style[name]}"' + (f' title="{escape_text(where + str(row[name]))}"' if name == "answer"
                                            else "") + f">{escape_text(str(shown.get(name, str)(row[name])))}</td>"
            for name in style) + "</tr>"

    rows = "".join(row_html(row) for row in table.to_dict("records"))
    return (f'<div style="max-height: {height_px}px; overflow-y: auto;"><table style="font-size: 0.85em; '
            f'line-height: 1.4; border-collapse: collapse; margin: 0; table-layout: auto;"><thead><tr>{header}</tr>'
            f"</thead><tbody>{rows}</tbody></table></div>")


def _logits(row: dict) -> str:
    """A span's start / end logits; "no answer"'s score, the start and end logits at [CLS], summed (the model keeps
    only their sum)."""
    if pd.isna(row["start logit"]):
        return f"{row['null score']:.2f} (sum at [CLS])"
    return f"{row['start logit']:.2f} / {row['end logit']:.2f}"


def percent(probability: float) -> str:
    """Two significant digits, so that small probabilities do not all read 0.0%; from 1% on, whole or one-decimal
    percentages (a `g` format would write 100% as 1e+02%)."""
    points = 100 * probability
    return f"{points:.2g}%" if points < 1 else f"{points:.3g}%" if points < 99.95 else "100%"


def example_heading(example: Example, model_name: str) -> str:
    """One escaped line naming the example and model a page shows."""
    return (f'<p style="color: #444; {WRAPPED}"><strong>{escape_text(example.title or example.id)}</strong>: '
            f"“{escape_text(example.question)}” · model {escape_text(model_name)}</p>")


def nbest_table(answer: Answer) -> pd.DataFrame:
    """The candidate spans the best answer won against, with the model's probabilities, and "no answer" at its
    rank where the model may abstain, with its score (null score: the start + end logit at [CLS])."""
    return pd.DataFrame([
        {"rank": rank, "answer": "(no answer)", "probability": entry["probability"], "start logit": None,
         "end logit": None, "null score": entry["score"], "characters": "", "window": entry["window"] + 1}
        if entry["no_answer"] else
        {"rank": rank, "answer": entry["text"], "probability": entry["probability"],
         "start logit": entry["start_logit"], "end logit": entry["end_logit"], "null score": None,
         "characters": f"{entry['start_char']}–{entry['end_char']}", "window": entry["window"] + 1}
        for rank, entry in enumerate(answer.ranked(), 1)])
