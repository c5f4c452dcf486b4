"""Start and end joined or apart: the targets a view explains. "Apart" explains the span's start logit and end logit
as two more targets of the same job, after the target as chosen (so every other view still reads that one, joined):
one pass over each layer's path, each target checked for completeness (rcqa.attribution.engine); rcqa.ui.start_end
draws them.

It is a way of reading any answer, like the method, so it stays when the example changes. A contrast and an
abstention's targets weigh the span against a second one in both logits, so they are not split (refusal)."""
from __future__ import annotations

from collections.abc import Sequence

from rcqa.attribution.settings import FoilSpec
from rcqa.types import NULL_TARGETS

ENDS = {"joined": "joined (the target as chosen)", "apart": "apart (the start and the end logit, each alone, too)"}
APART_TARGETS = ("start_logit", "end_logit")  # their sum is span_logits: IG's attributions add up the same way


def refusal(target: str, contrast: FoilSpec | None) -> str | None:
    """Why start and end apart is not offered for this target or contrast (one sentence), or None where it is."""
    if contrast is not None:
        return ("Start and end apart is not offered for a contrast: it weighs the span's start and end logits against "
                "the foil's, which the span's own logits alone would not explain, so it is shown joined.")
    if target in NULL_TARGETS:
        return (f"Start and end apart is not offered for {target}: it reads “no answer” at [CLS] in both the start "
                "and the end logits, which the span's own logits alone would not explain, so it is shown joined.")
    return None


def explained_targets(target: str, ends: str, contrast: FoilSpec | None) -> tuple[str, ...]:
    """The targets a view explains: the target as chosen, then, apart (where offered), the start and end logits."""
    if ends == "apart" and refusal(target, contrast) is None:
        return tuple(dict.fromkeys((target, *APART_TARGETS)))
    return (target,)


def ends_of(targets: Sequence[str]) -> str:
    """explained_targets read backwards: "apart" where the targets hold both logits."""
    return "apart" if set(APART_TARGETS) <= set(targets) else "joined"
