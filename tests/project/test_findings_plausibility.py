"""docs/findings.md's plausibility tables (issue 55) are what the committed 1,000-question runs' rows give: regenerated
from them by the command the section names, and its sentences read against the same numbers."""
from __future__ import annotations

from pathlib import Path

from rcqa.dataset.plausibility import BEGIN, END, section, summary

ROOT = Path(__file__).resolve().parents[2]
RUNS = {"Integrated Gradients": ROOT / "reports/plausibility/squad-dev-1000-ig",
        "AttnLRP": ROOT / "reports/plausibility/squad-dev-1000-attnlrp",
        "Gradient × activation": ROOT / "reports/plausibility/squad-dev-1000-gradxact"}
FINDINGS = ROOT / "docs/findings.md"


def test_the_tables_are_the_committed_rows():
    text = FINDINGS.read_text()
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == section(RUNS).strip()


def test_the_sentences_read_the_tables_numbers():
    text = " ".join(FINDINGS.read_text().split())
    attnlrp = [layer["mean"] for layer in summary(RUNS["AttnLRP"])["magnitude"]["top1_predicted"]]
    assert f"AttnLRP's top token lies in the predicted span at every layer ({100 * min(attnlrp):.1f}–" \
           f"{100 * max(attnlrp):.1f} %)" in text
    ig = [layer["mean"] for layer in summary(RUNS["Integrated Gradients"])["magnitude"]["top1_predicted"]]
    assert f"IG's too ({100 * min(ig):.1f}–{100 * max(ig):.1f} %)" in text
    gradient = [layer["mean"] for layer in summary(RUNS["Gradient × activation"])["magnitude"]["top1_predicted"]]
    assert f"Gradient × activation's goes from {100 * gradient[0]:.1f} % at the embeddings to " \
           f"{100 * gradient[-1]:.1f} % at the last layer" in text
    for label, run in RUNS.items():
        gold = summary(run)["magnitude"]["top1_gold"][-1]["mean"]
        assert f"{label}: {100 * gold:.1f} %" in text
