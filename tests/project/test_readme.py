"""The README as a researcher meets it: its install is what CI runs, its commands and its Python example run as
written from the checkout's root (the passage files they read are the gallery's), and the scores it (and the manual)
quotes are the ones the shipped model cards hold."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rcqa.gallery import GALLERY, gallery_example

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CARDS = {name: json.loads((ROOT / "rcqa" / folder / "rcqa_card.json").read_text(encoding="utf-8"))
         for name, folder in (("default", "default_model"), ("default-squad2", "default_squad2_model"))}
# `evaluate --against`: the shipped third stage against the second on the v2-style dev set of its mix
CARDS["third-vs-second"] = json.loads((ROOT / "reports" / "abstention" / "dev-v2lexicon-third-vs-second.json")
                                      .read_text(encoding="utf-8"))


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.S | re.M)


def test_the_readme_install_installs_rcqa_and_is_what_ci_runs():
    (install,) = [line for line in blocks("bash")[0].splitlines() if line.startswith("pip install")]
    assert install.split()[-2:] == ["-e", "."]  # rcqa itself, so that `import rcqa` works outside the checkout
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert install.replace("pip install", "pip install --quiet") in ci.splitlines()


def test_each_example_file_is_its_gallery_passage_exactly():
    """examples/NAME.txt, which the README's commands read, is the passage of the gallery's NAME-… examples, to the
    byte (no newline added), and every gallery passage has its file."""
    passages = {example.id.split("-")[0]: example.passage for example in GALLERY}
    files = {path.stem: path.read_bytes() for path in (ROOT / "examples").glob("*.txt")}
    assert files.keys() == passages.keys()
    for name, passage in passages.items():
        assert files[name] == passage.encode("utf-8"), f"examples/{name}.txt is not the gallery's passage"


def commands(verb: str) -> list[list[str]]:
    """The README's `python -m rcqa VERB` lines, as argument lists run by this interpreter."""
    lines = [line for block in blocks("bash") for line in block.splitlines()
             if line.startswith(f"python -m rcqa {verb} ")]
    return [[sys.executable, *shlex.split(line, comments=True)[1:]] for line in lines]


def like_the_root(folder: Path) -> dict[str, str]:
    """`folder` laid out as the checkout's root for the README's commands (its examples/, and rcqa on the path as
    the root puts it there), so that what they write lands in it; the environment to run them in."""
    (folder / "examples").symlink_to(ROOT / "examples")
    return {**os.environ, "PYTHONPATH": str(ROOT), "RCQA_RESULT_CACHE": str(folder / "cache")}


def test_the_readme_answer_command_runs_as_written_from_the_root():
    (answer,) = commands("answer")
    done = subprocess.run(answer, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == gallery_example("lighthouse-who").answers[0].text


@pytest.mark.slow  # two explanations of the lighthouse with the default model, and one read back from the cache
def test_the_readme_explain_commands_run_as_written_and_the_second_time_say_the_cache_answered(tmp_path):
    env = like_the_root(tmp_path)
    explain, attnlrp = commands("explain")
    for command in (explain, attnlrp):
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    result, relevance = (json.loads((tmp_path / name).read_text(encoding="utf-8"))
                         for name in ("result.json", "lrp.json"))
    assert result["answer"]["answer"] == gallery_example("lighthouse-who").answers[0].text
    assert relevance["settings"]["method"] == "attnlrp" and "method" not in result["settings"]  # IG's is unwritten
    again = subprocess.run(explain, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    kept = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert kept["from_cache"] and kept["computed_at"] == result["computed_at"] and not result["from_cache"]
    assert f"from the cache, computed in {result['seconds']:.1f} s on " in again.stderr  # as the README says


@pytest.mark.slow  # a fresh interpreter loads torch and the default model, and explains a passage with it
def test_the_readme_python_example_runs_as_written_outside_the_checkout(tmp_path):
    """From a folder laid out as the root, with the rcqa `pip install -e .` installed (not the checkout on the path),
    on a machine with no display: it prints the result's line and says how to save the figure it could not show."""
    env = {k: v for k, v in like_the_root(tmp_path).items() if k not in ("PYTHONPATH", "DISPLAY", "WAYLAND_DISPLAY")}
    found = subprocess.run([sys.executable, "-c", "import rcqa; print(rcqa.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    if found.returncode:
        pytest.skip("rcqa is not installed: the README's `pip install -r requirements.txt -e .` makes `import rcqa` "
                    "work outside the checkout")
    if Path(found.stdout.strip()).parent != ROOT / "rcqa":
        pytest.skip(f"the rcqa installed here is not this checkout's ({found.stdout.strip()}): `pip install -e .`")
    (example,) = blocks("python")[:1]
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    answer = gallery_example("lighthouse-who").answers[0].text
    assert done.stdout.startswith(f"<Attribution of 'Who designed the lighthouse?' → {answer!r} · model default (")
    assert "rcqa: no display here to show the heatmap on; save the figure that show returns with " \
           ".write_html('heatmap.html')" in done.stderr
    saved = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert saved["kind"] == "attribution" and saved["model"] == "default" and saved["answer"]["answer"] == answer


NUMBER = r"\**(−?[\d,]+\.\d+)\**"  # as the manual writes it: maybe bold, a minus sign (−), decimals


def _at(card: dict, path: str) -> float:
    for key in path.split("/"):
        card = card[key]
    return card


def _perturbation_noans(card: dict) -> float:
    """NoAns F1 over every perturbation negative of dev: the kinds' own, weighted by their counts."""
    kinds = [v for k, v in card["squad_v2style_dev"]["by_kind"].items() if k not in ("in_context", "other_paragraph")]
    return sum(k["NoAns_f1"] * k["NoAns_total"] for k in kinds) / sum(k["NoAns_total"] for k in kinds)


V2 = "squad_v2style_dev"
# (file, the claim with {} where each number stands, the card, what each number is on it: a path or a function)
CLAIMS = [
    ("README.md", "overall F1 {}, HasAns F1 {}, NoAns F1 {}; SQuAD v1.1 dev with answers forced F1 {}",
     "default-squad2", [f"{V2}/f1", f"{V2}/HasAns_f1", f"{V2}/NoAns_f1", "squad_v1.1_dev/f1"]),
    ("docs/abstention.md", "threshold {}; SQuAD v1.1 dev with answers forced F1 {}; on the v2-style dev set",
     "default-squad2", [lambda c: c["no_answer"]["threshold"], "squad_v1.1_dev/f1"]),
    ("docs/abstention.md", "overall F1 {}, HasAns F1 {}, NoAns F1 {}, and {} on its 2,642",
     "default-squad2", [f"{V2}/f1", f"{V2}/HasAns_f1", f"{V2}/NoAns_f1", _perturbation_noans]),
    ("docs/abstention.md", "negation {}, mutual exclusion {}, impossible condition {}, entity swap {}, antonym {}, "
                           "vague quantity {}, role swap {}",
     "default-squad2", [f"{V2}/by_kind/{kind}/NoAns_f1" for kind in
                        ("negation", "mutual_exclusion", "impossible_condition", "entity_swap", "antonym",
                         "vague_quantity", "role_swap")]),
    ("docs/abstention.md", "`best_f1` {} at step 200, {} at 400, {} at 600, {} at 800, {} final", "default-squad2",
     [f"checkpoint/held_out_best_f1/{step}" for step in ("step-200", "step-400", "step-600", "step-800", "final")]),
    ("docs/abstention.md", "SQuAD v1.1 dev with answers forced: F1 {}", "default-squad2", ["squad_v1.1_dev/f1"]),
    ("docs/abstention.md", "the second stage, which main shipped before, scores F1 {}: the third stage is {} points "
                           "higher, paired 95 % interval +{} to +{} over its 15,855 questions", "third-vs-second",
     ["against/against_f1", "against/difference/mean", "against/difference/low", "against/difference/high"]),
    ("docs/abstention.md", "it scores F1 {} against the second stage's {}, +{} points, paired 95 % interval +{} to +{}",
     "third-vs-second", ["against/f1", "against/against_f1", "against/difference/mean", "against/difference/low",
                         "against/difference/high"]),
    ("docs/model.md", "same file the second stage scores F1 {}, {} points lower (paired 95 % interval +{} to +{}",
     "third-vs-second", ["against/against_f1", "against/difference/mean", "against/difference/low",
                         "against/difference/high"]),
    ("docs/abstention.md", "NoAns F1 on the perturbation negatives of dev: {}", "default-squad2",
     [_perturbation_noans]),
    ("docs/abstention.md", "Answerable F1 on the hand-written set: {}", "default-squad2", ["hand_written/HasAns_f1"]),
    ("docs/abstention.md", "Overall v2-style F1: {}", "default-squad2", [f"{V2}/f1"]),
    ("docs/model.md", "SQuAD v1.1 dev, all 10,570 questions: exact match {}, F1 {}", "default",
     ["squad_v1.1_dev/exact_match", "squad_v1.1_dev/f1"]),
    ("docs/model.md", "The first stage alone scored {} / {}", "default",
     ["warm_start/squad_v1.1_dev/exact_match", "warm_start/squad_v1.1_dev/f1"]),
    ("docs/model.md", "(10,570 questions, `--no-null`): exact match {}, F1 {} (the default model: {} / {}; the "
                      "second stage {} / {})", "default-squad2",
     ["squad_v1.1_dev/exact_match", "squad_v1.1_dev/f1", lambda c: CARDS["default"]["squad_v1.1_dev"]["exact_match"],
      lambda c: CARDS["default"]["squad_v1.1_dev"]["f1"], "warm_start/squad_v1.1_dev/exact_match",
      "warm_start/squad_v1.1_dev/f1"]),
    ("docs/model.md", "| all (10,570 answerable + 5,285 unanswerable) | {} | {} |", "default-squad2",
     [f"{V2}/f1", f"{V2}/NoAns_f1"]),
    ("docs/model.md", "| answerable only (HasAns) | {} |", "default-squad2", [f"{V2}/HasAns_f1"]),
    *[("docs/model.md", f"| answerable + the {row} | {{}} | {{}} |", "default-squad2",
       [f"{V2}/by_kind/{kind}/f1", f"{V2}/by_kind/{kind}/NoAns_f1"])
      for row, kind in (("1,321 in-context negatives", "in_context"), ("1,322 other-paragraph negatives",
                        "other_paragraph"), ("1,209 entity swaps", "entity_swap"), ("587 antonyms", "antonym"),
                        ("586 negations", "negation"), ("159 impossible conditions", "impossible_condition"),
                        ("58 mutual exclusions", "mutual_exclusion"), ("26 role swaps", "role_swap"),
                        ("17 vague quantities", "vague_quantity"))],
    ("docs/model.md", "perturbations among them) was {} at step 200, {} at 400, {} at 600, {} at 800 and {} at the end",
     "default-squad2",
     [f"checkpoint/held_out_best_f1/{step}" for step in ("step-200", "step-400", "step-600", "step-800", "final")]),
]


def _pattern(claim: str) -> str:
    """The claim as a regular expression: each {} a number, any run of spaces any whitespace (lines wrap)."""
    def words(part: str) -> str:
        around = [r"\s+" if edge.isspace() else "" for edge in (part[:1], part[-1:])]
        return around[0] + r"\s+".join(map(re.escape, part.split())) + (around[1] if part.strip() else "")

    return NUMBER.join(words(part) for part in claim.split("{}"))


@pytest.mark.parametrize("document, claim, card, keys", CLAIMS, ids=[f"{c[0]}: {c[1][:40]}" for c in CLAIMS])
def test_a_score_the_docs_quote_is_the_shipped_cards_to_the_digits_quoted(document, claim, card, keys):
    found = re.search(_pattern(claim), (ROOT / document).read_text(encoding="utf-8"))
    assert found, f"{document} no longer says “{claim}”: quote the card's numbers there again, or update this claim"
    assert len(found.groups()) == len(keys)
    for quoted, key in zip(found.groups(), keys):
        value = key(CARDS[card]) if callable(key) else _at(CARDS[card], key)
        decimals = len(quoted.split(".")[1])
        assert float(quoted.replace("−", "-").replace(",", "")) == round(value, decimals), (
            f"{document} quotes {quoted} where {card}'s card holds {value} ({key if isinstance(key, str) else ''})")


TRADEOFF = json.loads((ROOT / "reports" / "abstention" / "hand-written-tradeoff.json").read_text(encoding="utf-8"))


def test_the_manuals_tradeoff_table_and_its_sentences_are_the_reports_curves():
    """docs/abstention.md's table: per model, where its curve stops at the floor, and the best answerable F1 of the
    points abstaining on 16 of 20 (the issue's 80 %), read off the report's curves here; then the sentences."""
    text = (ROOT / "docs" / "abstention.md").read_text(encoding="utf-8")
    rows = {name: (int(abstained), float(at), float(best)) for name, abstained, at, best in re.findall(
        r"^\| `([^`]+)` \| (\d+) of 20 \| ([\d.]+) \| ([\d.]+) \|$", text, re.M)}
    assert TRADEOFF["floor"] == 85.0 and TRADEOFF["kinds"] == ["antonym", "entity_swap"]
    best_at_16 = {}
    for model in TRADEOFF["models"]:
        points = model["curve"]
        kept = [p for p in points if p["HasAns_f1"] >= 85.0]  # the floor: where the curve stops
        stop = max(kept, key=lambda p: (p["abstained"], p["HasAns_f1"]))
        best_at_16[model["model"]] = max(p["HasAns_f1"] for p in points if p["abstained"] >= 16)
        assert rows[model["model"]] == (stop["abstained"], round(stop["HasAns_f1"], 2),
                                        round(best_at_16[model["model"]], 2)), model["model"]
    assert len(rows) == len(TRADEOFF["models"])
    assert f"At 16 of 20 the best answerable F1 of any is {max(best_at_16.values()):.2f}" in " ".join(text.split())
    most = max(m["stops"]["abstained"] for m in TRADEOFF["models"])
    assert f"at answerable F1 85 the most any abstains on is {most} of 20" in " ".join(text.split())


def test_the_manuals_dev_table_counts_each_kind_as_the_card_does():
    """docs/model.md's rows "answerable + the N <kind>": N is the card's count of that kind's negatives."""
    text = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    kinds = CARDS["default-squad2"][V2]["by_kind"]
    rows = dict((kind, int(count.replace(",", ""))) for count, kind in (
        (c, k) for c, words in re.findall(r"^\| answerable \+ the ([\d,]+) ([a-z -]+?) \|", text, re.M)
        for k in kinds if words.rstrip("s").replace("-", " ").startswith(k.replace("_", " ").rstrip("s")[:8])))
    assert rows == {kind: m["NoAns_total"] for kind, m in kinds.items()}
    assert CARDS["third-vs-second"]["against"]["told_apart"]  # the manual says the third stage scores higher

