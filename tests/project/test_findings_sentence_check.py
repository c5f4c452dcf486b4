"""docs/findings.md's sentence check (issue 55) is what the committed per-question checks give: the summary JSON, the
table and every sentence the section quotes are regenerated from reports/sentence-check/*/questions.jsonl by the
code the verb runs."""
from __future__ import annotations

import json
from pathlib import Path

from rcqa.attribution.layerwise import layerwise_method
from rcqa.faithfulness.sentences.over_questions import read_checks, summarize, table

ROOT = Path(__file__).resolve().parents[2]
(RUN,) = sorted((ROOT / "reports" / "sentence-check").glob("*/questions.jsonl"))
BEGIN, END = "<!-- sentence-check:begin -->", "<!-- sentence-check:end -->"


def regenerated() -> tuple[dict, dict]:
    protocol, questions = read_checks(RUN)
    methods = list(protocol["settings"])
    labels = {name: layerwise_method(name).label for name in methods}
    return summarize(questions, methods, labels), labels


def test_the_summary_table_and_sentences_are_the_committed_checks():
    document, labels = regenerated()
    kept = json.loads((RUN.parent / "sentence-check.json").read_text())
    assert {key: kept[key] for key in document} == json.loads(json.dumps(document))
    shown = (ROOT / "docs" / "findings.md").read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    assert table(document, labels) in shown
    quoted = [line.removeprefix("- ") for line in shown.splitlines() if line.startswith("- ")]
    assert quoted and all(sentence in document["verdicts"] for sentence in quoted)  # each computed, none by hand
    drops = [s for s in document["verdicts"] if "lowers the answer's probability by" in s or "deletion causes" in s]
    assert drops and set(drops) <= set(quoted)  # the sentence-level faithfulness, every method and pair
    assert f"first {document['questions']} questions" in " ".join(shown.split())
