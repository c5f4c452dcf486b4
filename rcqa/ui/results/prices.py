"""What an explanation costs on this server, and whether the server takes it: a job over the time or memory budget
is refused with the one sentence that says what to change."""
from __future__ import annotations

import streamlit as st

from rcqa.attribution.cost import Price, explanation_price
from rcqa.attribution.settings import ExplainSettings
from rcqa.model import QAModel
from rcqa.types import Example
from rcqa.ui.capacity import refusal
from rcqa.ui.results.answers import answer, window_tokens


def explanation_price_of(qa_model: QAModel, current: Example, settings: ExplainSettings) -> Price | None:
    """What explaining the example with these settings costs on this server (rcqa.attribution.cost): every window of
    the passage, or the answer's, whose tokens are counted where it is the only one (a longer passage's windows are
    full), after reading every window to answer. None, with the reason shown, where the model cannot read the
    example."""
    found = answer(qa_model, current)
    if found is None:
        return None
    windows = found.n_windows if settings.windows == "all" else 1
    return explanation_price(qa_model, settings, windows, window_tokens(qa_model, current, found), found.n_windows)


def affordable_price(qa_model: QAModel, current: Example, settings: ExplainSettings) -> Price | None:
    """The explanation's price if the server takes it (rcqa.ui.capacity.refusal: its expected seconds within the time
    budget, one path point within the memory budget); None, with the reason shown (what to change), otherwise."""
    if (price := explanation_price_of(qa_model, current, settings)) is None:
        return None
    return price if within_budget("explanation", price, explanation_change(settings)) else None


# how a passage too long for one job is explained all the same: by the CLI on one's own machine, or by a dataset run
WHOLE_PASSAGE_OFFLINE = ("`python -m rcqa explain --passage-file PASSAGE.txt --question QUESTION --windows all "
                         "--json OUT.json` explains it on your own machine, and a dataset run (`python -m rcqa "
                         "reproduce --data FILE.json --out RUN --windows all`) explains every question of a file")


def explanation_change(settings: ExplainSettings) -> str:
    """What to change to make an explanation cheaper (and, for a whole passage, where it can be explained
    instead)."""
    return (f"explain the answer's window only (Windows explained); {WHOLE_PASSAGE_OFFLINE}"
            if settings.windows == "all" else "choose fewer steps, or a preset with fewer")


def within_budget(job: str, price: Price, change: str) -> bool:
    """Whether the job fits the server: one path point within its memory budget, its expected seconds within its
    time budget; else the one sentence refusing it, naming what to change, is shown (rcqa.ui.capacity.refusal)."""
    if (refused := refusal(job, price, change)) is not None:
        st.warning(refused)
        return False
    return True
