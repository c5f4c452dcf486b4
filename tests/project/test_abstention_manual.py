"""docs/abstention.md's account of where the 6-layer model stops, read back against the reports it quotes: the
hand-written antonyms' table (which the training's generator writes, each model's null odds, bold where it abstains)
and the sentence that counts them."""
import json
import re
from pathlib import Path

import pytest

from rcqa.data import load_examples
from rcqa.negatives.reach import written_by_antonym_generator
from tests.project.test_readme import _at, _pattern

ROOT = Path(__file__).parents[2]
MANUAL = (ROOT / "docs" / "abstention.md").read_text(encoding="utf-8")
ANTONYMS = json.loads((ROOT / "reports" / "abstention" / "hand-written-antonyms.json").read_text(encoding="utf-8"))


def _odds(cell: str) -> tuple[float, bool]:
    """A cell's null odds and whether it is bold (the model abstains there)."""
    bold = cell.startswith("**")
    return float(cell.strip("*").replace("−", "-")), bold


def test_the_antonym_table_holds_the_reports_odds_bold_where_each_model_abstains_and_the_generators_reach():
    labels = list(ANTONYMS["thresholds"])
    header = re.search(r"^\| hand-written antonym \| the generator writes it \| (.+) \|$", MANUAL, re.M)
    assert header and [h.split(" (")[0] for h in header.group(1).split(" | ")] == labels
    rows = dict((question, cells) for question, cells in re.findall(r'^\| "([^"]+)" \| (.+) \|$', MANUAL, re.M))
    examples = {e.question: e for e in load_examples(ROOT / "tests" / "data" / "hard_unanswerable.json")}
    assert set(rows) == {q["question"] for q in ANTONYMS["questions"]}
    for entry in ANTONYMS["questions"]:
        writes, *odds = rows[entry["question"]].split(" | ")
        assert writes.startswith("yes" if entry["written_by_generator"] else "no"), entry["question"]
        assert entry["written_by_generator"] == written_by_antonym_generator(examples[entry["question"]])
        for label, cell in zip(labels, odds, strict=True):
            value, bold = _odds(cell)
            assert value == round(entry["null_odds"][label], 2), (entry["question"], label)
            assert bold == (entry["null_odds"][label] > ANTONYMS["thresholds"][label]), (entry["question"], label)


def test_the_sentence_under_the_antonym_table_counts_what_the_table_shows():
    last = list(ANTONYMS["thresholds"])[-1]
    threshold = ANTONYMS["thresholds"][last]
    written = [q for q in ANTONYMS["questions"] if q["written_by_generator"]]
    beyond = [q for q in ANTONYMS["questions"] if not q["written_by_generator"]]

    def abstained(questions):
        return sum(q["null_odds"][last] > threshold for q in questions)

    said = (f"The generator writes {len(written)} of the {len(ANTONYMS['questions'])}: the {last} abstains on "
            f"{abstained(written)} of those and on {abstained(beyond)} of the {len(beyond)} it does not write")
    assert said in " ".join(MANUAL.split())


REPORTS = ROOT / "reports" / "abstention"
# the fourth stage was measured but not shipped: its card, and its dev antonyms and entity swaps read beside the
# third stage's (`evaluate --against` on those questions alone), are kept as reports
FOURTH = {"card": json.loads((REPORTS / "fourth-stage-card.json").read_text(encoding="utf-8")),
          "kinds": json.loads((REPORTS / "dev-v2lexicon-kinds-fourth-vs-third.json").read_text(encoding="utf-8"))}
KIND = "against/by_kind/{}/"
FOURTH_CLAIMS = [
    ("its held-out `best_f1` was {} at step 200, {} at 400, {} at 600, {} at 800 and {} at the end", "card",
     [f"checkpoint/held_out_best_f1/{step}" for step in ("step-200", "step-400", "step-600", "step-800", "final")]),
    ("Tuned on the held-out articles to {}, it scores on the v2-style dev set of its mix F1 {}, HasAns F1 {}, NoAns "
     "F1 {}", "card", ["no_answer/threshold", "squad_v2style_dev/f1", "squad_v2style_dev/HasAns_f1",
                       "squad_v2style_dev/NoAns_f1"]),
    *[(f"NoAns F1 on dev's {count} {{}} against the third stage's {{}}: a difference of {{}} points, paired 95 % "
       f"interval {{}} to {{}}", "kinds", [KIND.format(kind) + key for key in (
          "NoAns_f1", "against_NoAns_f1", "difference/mean", "difference/low", "difference/high")])
      for count, kind in (("587 antonyms", "antonym"), ("1,209 entity swaps", "entity_swap"))],
]


@pytest.mark.parametrize("claim, source, keys", FOURTH_CLAIMS, ids=[c[0][:40] for c in FOURTH_CLAIMS])
def test_the_fourth_stages_numbers_are_its_reports_to_the_digits_quoted(claim, source, keys):
    found = re.search(_pattern(claim), MANUAL)
    assert found, f"docs/abstention.md no longer says “{claim}”"
    for quoted, key in zip(found.groups(), keys, strict=True):
        value = _at(FOURTH[source], key)
        assert float(quoted.replace("−", "-").replace(",", "")) == round(value, len(quoted.split(".")[1])), key


def test_the_kinds_compared_are_the_dev_files_own_and_each_verdict_follows_its_interval():
    kinds = FOURTH["kinds"]["against"]["by_kind"]
    counts = {kind: m["NoAns_total"] for kind, m in FOURTH["card"]["squad_v2style_dev"]["by_kind"].items()}
    assert {kind: c["difference"]["n"] for kind, c in kinds.items()} == {k: counts[k] for k in ("antonym",
                                                                                               "entity_swap")}
    for kind, compared in kinds.items():
        said = "not told apart" if not compared["told_apart"] else (
            "higher" if compared["difference"]["mean"] > 0 else "lower")
        low, high = (f"{compared['difference'][end]:.2f}".replace("-", "−") for end in ("low", "high"))
        assert f"interval {low} to {high}: {said}" in " ".join(MANUAL.split()), kind
