"""docs/abstention.md's account of where the 6-layer model stops, read back against the reports it quotes: the
hand-written antonyms' table (which the training's generator writes, each model's null odds, bold where it abstains)
and the sentence that counts them."""
import json
import re
from pathlib import Path

import pytest

from rcqa.data import load_examples
from rcqa.evaluate import normalize_answer
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


def _between(values: list[float]) -> str:
    """A range as the manual writes it: one value, "a and b", or "lowest to highest"."""
    written = [f"{v:.2f}".replace("-", "−") for v in sorted(values)]
    return " and ".join(written) if len(written) <= 2 else f"{written[0]} to {written[-1]}"


def test_each_models_rise_over_the_twin_is_what_the_report_holds():
    twinned = [q for q in ANTONYMS["questions"] if "twin" in q]
    assert all(q["twin"]["question"] == q["twins"][0] for q in twinned)
    assert len(twinned) == sum(bool(q["twins"]) for q in ANTONYMS["questions"])
    manual = " ".join(MANUAL.split())
    assert "seven of the ten have a twin" in manual and len(twinned) == 7 and len(ANTONYMS["questions"]) == 10
    for label, threshold in ANTONYMS["thresholds"].items():
        rise = {q["id"]: q["null_odds"][label] - q["twin"]["null_odds"][label] for q in twinned}
        caught = [q for q in twinned if q["null_odds"][label] > threshold]
        missed = [q for q in twinned if q["null_odds"][label] <= threshold]
        as_twin = sum(normalize_answer(q["answers"][label]) == normalize_answer(q["twin"]["answers"][label])
                      for q in missed)
        said = (f"**{label}**: higher on {sum(r > 0 for r in rise.values())} of the {len(twinned)}; by "
                f"{_between([rise[q['id']] for q in caught])} on the {len(caught)} it abstains on, by "
                f"{_between([rise[q['id']] for q in missed])} on the {len(missed)} it misses, {as_twin} of which it "
                "answers as it answers the twin.")
        assert said in manual, label


REPORTS = ROOT / "reports" / "abstention"
# the fourth stage was measured but not shipped: its card, and the v2-style dev set read by it and by the third stage
# question by question (`evaluate --against` over the whole file), are kept as reports
FOURTH = {"card": json.loads((REPORTS / "fourth-stage-card.json").read_text(encoding="utf-8")),
          "paired": json.loads((REPORTS / "dev-v2lexicon-fourth-vs-third.json").read_text(encoding="utf-8"))}
# each comparison the manual quotes: its words, where it sits in the report, and the metric compared
COMPARED = [("F1 {} against the third stage's {}", "against", "f1"),
            ("HasAns F1 on its 10,570 answerable questions {} against {}", "against/HasAns", "HasAns_f1"),
            ("NoAns F1 on its 5,285 unanswerable ones {} against {}", "against/NoAns", "NoAns_f1"),
            ("NoAns F1 on dev's 587 antonyms {} against the third stage's {}", "against/by_kind/antonym", "NoAns_f1"),
            ("NoAns F1 on dev's 1,209 entity swaps {} against the third stage's {}", "against/by_kind/entity_swap",
             "NoAns_f1")]
FOURTH_CLAIMS = [
    ("its held-out `best_f1` was {} at step 200, {} at 400, {} at 600, {} at 800 and {} at the end", "card",
     [f"checkpoint/held_out_best_f1/{step}" for step in ("step-200", "step-400", "step-600", "step-800", "final")]),
    ("Tuned on the held-out articles to {}, it scores on the v2-style dev set of its mix F1 {}, HasAns F1 {}, NoAns "
     "F1 {}", "card", ["no_answer/threshold", "squad_v2style_dev/f1", "squad_v2style_dev/HasAns_f1",
                       "squad_v2style_dev/NoAns_f1"]),
    *[(f"{words}: a difference of {{}} points, paired 95 % interval {{}} to {{}}", "paired",
       [f"{path}/{key}" for key in (metric, f"against_{metric}", "difference/mean", "difference/low",
                                    "difference/high")])
      for words, path, metric in COMPARED],
]


@pytest.mark.parametrize("claim, source, keys", FOURTH_CLAIMS, ids=[c[0][:40] for c in FOURTH_CLAIMS])
def test_the_fourth_stages_numbers_are_its_reports_to_the_digits_quoted(claim, source, keys):
    found = re.search(_pattern(claim), MANUAL)
    assert found, f"docs/abstention.md no longer says “{claim}”"
    for quoted, key in zip(found.groups(), keys, strict=True):
        value = _at(FOURTH[source], key)
        assert float(quoted.replace("−", "-").replace(",", "")) == round(value, len(quoted.split(".")[1])), key


def test_the_whole_dev_file_was_compared_and_each_verdict_follows_its_interval():
    paired, dev = FOURTH["paired"]["against"], FOURTH["card"]["squad_v2style_dev"]
    assert (paired["difference"]["n"], paired["HasAns"]["difference"]["n"], paired["NoAns"]["difference"]["n"]) == (
        dev["total"], dev["HasAns_total"], dev["NoAns_total"])
    assert {kind: c["difference"]["n"] for kind, c in paired["by_kind"].items()} == {
        kind: m["NoAns_total"] for kind, m in dev["by_kind"].items()}
    manual = " ".join(MANUAL.split())
    for words, path, _ in COMPARED:
        compared = _at(FOURTH["paired"], path)
        said = "not told apart" if not compared["told_apart"] else (
            "higher" if compared["difference"]["mean"] > 0 else "lower")
        low, high = (f"{compared['difference'][end]:.2f}".replace("-", "−") for end in ("low", "high"))
        assert f"interval {low} to {high}: {said}" in manual, words
