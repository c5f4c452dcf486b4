"""docs/findings.md's soft comprehensiveness and soft sufficiency (Zhao & Aletras) on the first questions of the
200-question comparison under `pad`, read back from the committed per-question values
(reports/squad-dev-200-rankings/soft-summaries-pad.json, made by scripts/soft_summaries.py) and, for AOPC, from the
run's own rows: every mean and interval recomputed with scipy (tests/project/test_findings_from_rows.py's bootstrap),
every sentence that ranks held to the paired intervals beside it."""
import json
import re

import numpy as np
import pytest

from tests.project.test_findings_from_rows import (
    LABELS,
    ROOT,
    cell,
    claim,
    findings,
    flat,
    interval,
    read_by_no_check,
    rows,
    table,
    told_apart,
)

RUN = "squad-dev-200-rankings-pad"
SOFT = ROOT / "reports" / "squad-dev-200-rankings" / "soft-summaries-pad.json"
HEADER = "| method, ranking | soft comprehensiveness | soft sufficiency | AOPC `pad`, the same questions |"
MEASURES = ("soft_comprehensiveness", "soft_sufficiency")
TITLE = "## Soft comprehensiveness and soft sufficiency: the same 200 questions"


def soft() -> dict:
    return json.loads(SOFT.read_text(encoding="utf-8"))


def values() -> dict[str, dict[str, np.ndarray]]:
    """entry → measure → per-question values over the questions computed, in id order; AOPC from the run's rows."""
    found = soft()
    ids = sorted(found)
    cells = dict(zip(rows(RUN, "id"), rows(RUN, "faithfulness")))
    return {entry: {**{m: np.array([found[i][entry][m] for i in ids]) for m in MEASURES},
                    "aopc": np.array([cells[i]["methods"][entry]["aopc"] for i in ids])} for entry in LABELS}


def section(text: str | None = None) -> str:
    text = findings() if text is None else text
    start = text.index(TITLE)
    return text[start:text.index("\n## ", start)]


def test_the_questions_are_the_first_of_the_run_in_id_order():
    ids, every = sorted(soft()), sorted(rows(RUN, "id"))
    assert ids == every[:len(ids)]
    if len(ids) < len(every):
        claim(flat(section()), "on the first {} of its 200 questions in id order", len(ids))
    else:
        assert "on all 200 questions" in flat(section())


def test_the_soft_summaries_do_not_rank_as_the_deletions_do():
    measured = values()
    means = {measure: {name: measured[name][measure].mean() for name in LABELS}
             for measure in (*MEASURES, "aopc")}
    text = flat(section())
    assert max(means["aopc"], key=means["aopc"].get) == "attnlrp:signed"
    assert "by AOPC on the same questions AttnLRP, signed is first" in text
    assert {max(means[m], key=means[m].get) for m in MEASURES} == {"attention_rollout:magnitude"}
    assert "both soft summaries put Attention rollout, magnitude first" in text
    for name in ("attnlrp:signed", "integrated_gradients:signed"):  # ahead: by a paired interval clear of 0
        assert interval(measured["random"]["soft_sufficiency"] - measured[name]["soft_sufficiency"])[1] > 0
    assert "by soft sufficiency random is ahead of both signed rankings" in text


def test_the_table_is_the_values():
    found, measured = table(findings(), HEADER), values()
    assert list(found) == list(LABELS.values())
    for name, label in LABELS.items():
        assert found[label] == [cell(interval(measured[name][m])) for m in (*MEASURES, "aopc")], label


@pytest.mark.parametrize("measure", MEASURES)
def test_each_measures_ranking_sentence_is_its_paired_intervals(measure):
    measured = values()
    entries = [name for name in LABELS if name != "random"]
    best = max(entries, key=lambda name: measured[name][measure].mean())
    pairs = {name: interval(measured[best][measure] - measured[name][measure]) for name in entries if name != best}
    tied = [name for name, pair in pairs.items() if not told_apart(pair)]
    assert all(pair[1] > 0 for name, pair in pairs.items() if name not in tied)  # the rest are behind the best
    label = measure.replace("_", " ")
    text = flat(section())
    claim(text, f"By {label} over {{}} questions, {LABELS[best]} has the highest ({{}})", len(measured[best][measure]),
          measured[best][measure].mean())
    opening = text[text.index(f"By {label} over"):]
    opening = opening[:opening.index("interval clear of 0.")]
    assert ("; not told apart from " in opening) == bool(tied)
    for name in tied:  # each named with its difference from the best and its paired interval
        claim(opening, f"{LABELS[name]} ({{}} [{{}}, {{}}])", *pairs[name])
    claim(opening, "ahead of the other {}, each by a paired", len(pairs) - len(tied))


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("entry", ["attnlrp:signed", "integrated_gradients:signed"])
def test_the_signed_rankings_against_random(measure, entry):
    measured = values()
    pair = interval(measured[entry][measure] - measured["random"][measure])
    verdict = "ahead of random" if pair[1] > 0 else "behind random" if pair[2] < 0 else "not told apart from random"
    template = f"{measure.replace('_', ' ')}, {LABELS[entry]} − random: {{}} [{{}}, {{}}], {verdict}"
    claim(flat(section()), template, *pair)


def test_every_decimal_of_the_section_is_read_back(monkeypatch):
    """Each decimal number of the section, altered alone, fails one of the tests above."""
    import tests.project.test_findings_soft as here

    original = findings()
    begin = original.index(TITLE)
    checks = [test_the_questions_are_the_first_of_the_run_in_id_order, test_the_table_is_the_values,
              test_the_soft_summaries_do_not_rank_as_the_deletions_do,
              *(lambda m=m: test_each_measures_ranking_sentence_is_its_paired_intervals(m) for m in MEASURES),
              *(lambda m=m, e=e: test_the_signed_rankings_against_random(m, e) for m in MEASURES
                for e in ("attnlrp:signed", "integrated_gradients:signed"))]
    positions = [begin + found.end() - 1 for found in re.finditer(r"\d+\.\d+", section(original))]
    unread = read_by_no_check(original, positions, checks, lambda text: monkeypatch.setattr(
        here, "findings", lambda: text))
    monkeypatch.undo()
    assert unread == [], f"quoted but read back by no test: {unread}"

