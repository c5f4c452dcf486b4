"""docs/findings.md's numbers from the committed runs it reads (the 200-question comparison under `pad` and
`remove`, its NAOPC and sanity subsets, the quantifier contrast), read back here from the runs' own rows.

Every mean and interval is recomputed with numpy and scipy, not with rcqa: the percentile bootstrap (2,000
resamples, 95 %), seeded as the report seeds it, over the rows in id order; every comparison from the per-question
differences, so that a sentence which ranks or compares says what its paired interval allows ("not told apart"
where it covers 0). A quoted number must equal the recomputed one to the digits quoted, and the words around it
must be there, so altering either fails here; test_every_decimal_quoted_is_read_back alters each decimal of these
sections in turn and checks that some test below fails. docs/methods.md's sanity sentence is checked against the
table beside it."""
import itertools
import json
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "reports" / "runs"
FINDINGS = ROOT / "docs" / "findings.md"
METHODS = ROOT / "docs" / "methods.md"
MINUS = "\u2212"
JSON_COLUMNS = {"faithfulness", "sanity", "contrast"}  # cells the rows hold as JSON text
NUMBER = r"([+\u2212-]?\d[\d,]*(?:\.\d+)?)"

LABELS = {"attnlrp:signed": "AttnLRP, signed", "integrated_gradients:signed": "Integrated Gradients, signed",
          "integrated_gradients:magnitude": "Integrated Gradients, magnitude",
          "attention_rollout:magnitude": "Attention rollout, magnitude",
          "gradient:magnitude": "Gradient sensitivity, magnitude",
          "gradient_x_input:magnitude": "Gradient × input, magnitude",
          "gradient_x_input:signed": "Gradient × input, signed",
          "attention_tracing:magnitude": "Attention tracing, magnitude", "attnlrp:magnitude": "AttnLRP, magnitude",
          "random": "random"}
SIGNED = ("integrated_gradients:signed", "attnlrp:signed")
MAGNITUDES = [name for name in LABELS if name.endswith(":magnitude")]


# ---------------------------------------------------------------------------------------------- the rows, read here

@cache
def rows(run: str, column: str) -> list:
    """The run's `column`, one value per row, rows in id order (the order the report bootstraps over)."""
    table = pq.read_table(RUNS / run / "shards", columns=list(dict.fromkeys(["id", column]))).sort_by("id")
    values = table.column(column).to_pylist()
    return [json.loads(v) for v in values] if column in JSON_COLUMNS else values


@cache
def faithfulness(run: str) -> dict[str, dict[str, np.ndarray]]:
    """entry → measure → per-question values (random: the mean of its draws)."""
    cells = rows(run, "faithfulness")

    def value(cell: dict, entry: str, measure: str) -> float:
        found = cell["methods"][entry].get(measure)
        found = found.get("mean") if isinstance(found, dict) else found
        return np.nan if found is None else float(found)

    return {entry: {m: np.array([value(c, entry, m) for c in cells])
                    for m in ("aopc", "comprehensiveness", "sufficiency", "naopc")}
            for entry in cells[0]["methods"]}


def interval(values, seed: int = 0) -> tuple[float, float, float]:
    """The mean of the defined values and its 95 % percentile-bootstrap interval (scipy, 2,000 resamples)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return _interval(values.tobytes(), seed)


@cache
def _interval(values: bytes, seed: int) -> tuple[float, float, float]:
    array = np.frombuffer(values)
    found = stats.bootstrap((array,), np.mean, confidence_level=0.95, n_resamples=2000, method="percentile",
                            rng=np.random.default_rng(seed)).confidence_interval
    return float(array.mean()), float(found.low), float(found.high)


def paired(run: str, a: str, b: str, measure: str = "aopc") -> tuple[float, float, float]:
    found = faithfulness(run)
    return interval(found[a][measure] - found[b][measure])


def told_apart(found: tuple[float, float, float]) -> bool:
    return found[1] > 0 or found[2] < 0


def sign_test(run: str, a: str, b: str) -> tuple[int, int, float]:
    differences = faithfulness(run)[a]["aopc"] - faithfulness(run)[b]["aopc"]
    ahead, behind = int((differences > 0).sum()), int((differences < 0).sum())
    return ahead, behind, float(stats.binomtest(ahead, ahead + behind).pvalue)


def shown(value: float, decimals: int = 3, signed: bool = False) -> str:
    return (f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}").replace("-", MINUS)


def cell(found: tuple[float, float, float], decimals: int = 3, signed: bool = False) -> str:
    return " ".join([shown(found[0], decimals, signed),
                     f"[{shown(found[1], decimals, signed)}, {shown(found[2], decimals, signed)}]"])


# ---------------------------------------------------------------------------------------------- the text, read here

def flat(text: str) -> str:
    """The text with every run of whitespace one space (lines wrap anywhere)."""
    return " ".join(text.split())


def claim(text: str, template: str, *values: float) -> None:
    """`template` (each {} a number) is in the text, and each number there is its value to the digits quoted."""
    pattern = NUMBER.join(r"\s+".join(map(re.escape, part.split(" "))) for part in template.split("{}"))
    found = re.search(pattern, text)
    assert found, f"the findings no longer say “{template}”"
    for quoted, value in zip(found.groups(), values, strict=True):
        decimals = len(quoted.split(".")[1]) if "." in quoted else 0
        number = float(quoted.replace(MINUS, "-").replace(",", ""))
        assert number == round(value, decimals), f"“{template}” quotes {quoted} where the rows give {value}"


def table(text: str, header: str) -> dict[str, list[str]]:
    """The markdown table under `header` (its first row): label → its cells, bold marks dropped."""
    lines = text[text.index(header):].splitlines()
    found = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        label, *cells = [part.strip().replace("**", "") for part in line.strip("|").split("|")]
        found[label] = cells
    return found


def findings() -> str:
    return FINDINGS.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- each question once

SIX = {"squad-dev-10-sanity": 1, "squad-dev-100-naopc-pad": 3, "squad-dev-200-rankings-pad": 5,
       "squad-dev-200-rankings-remove": 5, "squad-dev-200-spared-attnlrp": 5, "squad-dev-quantifier-contrast": 2}


def twins(run: str) -> list[tuple[int, int]]:
    """Pairs of rows (indices in id order) asking the same question of the same passage under two ids."""
    passages, questions = rows(run, "passage"), rows(run, "question")
    seen: dict[tuple[str, str], list[int]] = {}
    for index, key in enumerate(zip(passages, questions)):
        seen.setdefault(key, []).append(index)
    return [tuple(found) for found in seen.values() if len(found) > 1]


@pytest.mark.parametrize("run", SIX)
def test_each_mended_run_scores_every_question_of_its_selection_once(run):
    manifest = json.loads((RUNS / run / "manifest.json").read_text())
    ids = rows(run, "id")
    assert len(ids) == len(set(ids)) == manifest["counts"]["done"]
    counts = manifest["counts"]
    assert counts["done"] + counts["failed"] + counts.get("skipped", 0) == counts["total"] == manifest["data"]["limit"]
    assert len(twins(run)) == SIX[run]


@pytest.mark.parametrize("run", SIX)
def test_a_twins_row_holds_its_siblings_numbers_as_the_docs_say(run):
    """docs/datasets.md: AOPC and NAOPC within 0.00001, sanity ρ within 0.001; findings.md: within 0.00001 for
    AOPC, and the contrast's twin rows are their siblings' but for the id."""
    datasets = flat((ROOT / "docs" / "datasets.md").read_text(encoding="utf-8"))
    assert "(AOPC and NAOPC within 0.00001, sanity ρ within 0.001)" in datasets
    for first, second in twins(run):
        if run == "squad-dev-10-sanity":
            a, b = (rows(run, "sanity")[i]["entries"] for i in (first, second))
            for entry in a:
                for series in ("cascade", "independent"):
                    rho = [np.array(x[entry][series]["spearman"], dtype=float) for x in (a, b)]
                    assert np.nanmax(np.abs(rho[0] - rho[1]), initial=0) <= 0.001
        elif run == "squad-dev-quantifier-contrast":
            assert rows(run, "contrast")[first] == rows(run, "contrast")[second]
        else:
            for entry, measures in faithfulness(run).items():
                for measure in ("aopc", "naopc"):
                    values = measures[measure][[first, second]]
                    assert np.isnan(values).all() or abs(values[0] - values[1]) <= 0.00001, (entry, measure)


def test_the_findings_say_how_many_twins_each_run_holds():
    text = flat(findings())
    assert "Five pairs among these 200 questions are twins" in text
    assert "so its 200 rows were 195 questions" in text and "each holds 200 distinct ids" in text
    assert "Three pairs among the 100 are twins" in text
    assert "one of the 10 is a twin" in text
    assert "Two pairs among them are twins" in text and "so its 227 rows were 225 questions" in text
    assert "(every AOPC within 0.00001)" in text  # the bound test_a_twins_row_holds... checks


# ---------------------------------------------------------------------------------------------- the 200 questions

RANKINGS_HEADER = "| method, ranking | AOPC `pad` | AOPC `remove` |"


def test_the_rankings_table_is_the_rows():
    pad, remove = (f"squad-dev-200-rankings-{op}" for op in ("pad", "remove"))
    found = table(findings(), RANKINGS_HEADER)
    assert list(found) == list(LABELS.values())
    means = [faithfulness(pad)[name]["aopc"].mean() for name in LABELS if name != "random"]
    assert means == sorted(means, reverse=True)  # the table runs from the most AOPC under pad down
    for name, label in LABELS.items():
        expected = [cell(interval(faithfulness(pad)[name]["aopc"])), cell(interval(faithfulness(remove)[name]["aopc"])),
                    cell(interval(faithfulness(pad)[name]["comprehensiveness"])),
                    cell(interval(faithfulness(pad)[name]["sufficiency"]))]
        beats = "—" if name == "random" else " / ".join(
            f"{100 * np.mean(faithfulness(run)[name]['aopc'] > faithfulness(run)['random']['aopc']):.1f}"
            for run in (pad, remove)) + " %"
        assert found[label] == [*expected, beats], label


@pytest.mark.parametrize("operator", ["pad", "remove"])
def test_each_verdict_quoted_is_the_reports_and_its_numbers_the_rows(operator):
    run = f"squad-dev-200-rankings-{operator}"
    summary = json.loads((ROOT / "reports" / "squad-dev-200-rankings" / run / "summary.json").read_text())
    verdict = summary["faithfulness"]["verdict"]
    assert f"*{verdict}*" in flat(findings())
    found = faithfulness(run)
    entries = [name for name in found if name != "random"]
    best = max(entries, key=lambda name: found[name]["aopc"].mean())
    beaten = [paired(run, best, name) for name in entries if name != best]
    assert all(told_apart(pair) and pair[0] > 0 for pair in beaten)
    closest = min(beaten, key=lambda pair: pair[0])
    assert (f"{LABELS[best]} finds the most of what the answer rests on ({found[best]['aopc'].mean():.3f}); ahead of "
            f"every other method, the closest") in verdict
    assert f"by {closest[0]:+.3f} [{closest[1]:+.3f}, {closest[2]:+.3f}]" in verdict
    against = {name: paired(run, name, "random") for name in entries}
    ahead = [name for name in entries if told_apart(against[name]) and against[name][0] > 0]
    level = [name for name in entries if not told_apart(against[name])]
    assert f"{len(ahead)} of the {len(entries)} methods find more than random deletion" in verdict
    assert f"{' and '.join(LABELS[name] for name in level)} are not told apart from random" in verdict


PAD, REMOVE = "squad-dev-200-rankings-pad", "squad-dev-200-rankings-remove"


def test_the_probability_before_deletion():
    claim(flat(findings()), "The answer's probability before any deletion: {} on average.",
          float(np.mean([c["original_probability"] for c in rows(PAD, "faithfulness")])))


def test_the_ranking_decides_as_much_as_the_method():
    ig, lrp = faithfulness(PAD)["integrated_gradients:signed"], faithfulness(PAD)["attnlrp:signed"]
    ig_pair = paired(PAD, "integrated_gradients:signed", "integrated_gradients:magnitude")
    lrp_random = paired(PAD, "attnlrp:magnitude", "random")
    assert told_apart(ig_pair) and not told_apart(lrp_random)
    claim(flat(findings()), "Ranked by its signed score IG's AOPC is {}, by magnitude {} (paired {} [{}, {}] under "
                            "`pad`); AttnLRP's signed {}, its magnitude {}, not told apart from random (paired {} [{}, {}]).",
          ig["aopc"].mean(), faithfulness(PAD)["integrated_gradients:magnitude"]["aopc"].mean(), *ig_pair,
          lrp["aopc"].mean(), faithfulness(PAD)["attnlrp:magnitude"]["aopc"].mean(), *lrp_random)


def test_attnlrp_signed_ahead_of_ig_signed_under_both_operators():
    pad, remove = (paired(run, "attnlrp:signed", "integrated_gradients:signed") for run in (PAD, REMOVE))
    assert told_apart(pad) and told_apart(remove)
    text = flat(findings())
    claim(text, "ahead of IG, signed by {} [{}, {}] (`pad`; sign test p = {}) and {} [{}, {}] (`remove`): the two "
                "are told apart under both operators", *pad, sign_test(PAD, "attnlrp:signed",
                                                                      "integrated_gradients:signed")[2], *remove)
    claim(text, "(AttnLRP's, by {} AOPC under `pad`)", pad[0])
    gap = {run: faithfulness(run)["attnlrp:signed"]["aopc"] - faithfulness(run)["integrated_gradients:signed"]["aopc"]
           for run in (PAD, REMOVE)}
    assert rows(PAD, "id") == rows(REMOVE, "id")  # the same questions, in the same order, under both operators
    wider = interval(gap[REMOVE] - gap[PAD])
    assert told_apart(wider) and wider[0] > 0
    claim(text, "gives the narrower gap (the `remove` gap wider by {} [{}, {}], question by question)", *wider)


def test_which_top_words_alone_hold_the_answer_better_than_the_passage():
    """Sufficiency is p(whole passage) − p(top words alone), question by question: below 0 with its interval clear
    of 0 is "better than the whole passage"; covering 0 is "not told apart"."""
    suff = {run: {name: interval(found["sufficiency"]) for name, found in faithfulness(run).items()}
            for run in (PAD, REMOVE)}
    for run in (PAD, REMOVE):
        assert all(suff[run][name][2] < 0 for name in SIGNED)
        assert suff[run]["gradient_x_input:signed"][1] > 0
        assert not any(suff[run][name][2] < 0 for name in MAGNITUDES)  # no magnitude ranking's do
        level = [name for name in MAGNITUDES if not told_apart(suff[run][name])]
        assert level == ["integrated_gradients:magnitude", "attention_rollout:magnitude"]
        assert all(suff[run][name][1] > 0 for name in MAGNITUDES if name not in level)  # the other four
    assert all(suff[REMOVE][name][0] < 0 for name in ("integrated_gradients:magnitude", "attention_rollout:magnitude"))
    claim(flat(findings()),
          "(sufficiency below 0, its interval clear of 0: {} [{}, {}] and {} [{}, {}] under `pad`, {} [{}, {}] and "
          "{} [{}, {}] under `remove`); gradient × input's signed ones do not ({} [{}, {}] under `pad`). No magnitude "
          "ranking's top words do: under `pad` IG's and rollout's are not told apart from the whole passage ({} [{}, "
          "{}] and {} [{}, {}]); under `remove` the same two fall below 0 and are still not told apart from it ({} "
          "[{}, {}] and {} [{}, {}]); the other four magnitude rankings' top words hold it less well under both "
          "(their intervals above 0).",
          *suff[PAD]["integrated_gradients:signed"], *suff[PAD]["attnlrp:signed"],
          *suff[REMOVE]["integrated_gradients:signed"], *suff[REMOVE]["attnlrp:signed"],
          *suff[PAD]["gradient_x_input:signed"],
          *suff[PAD]["integrated_gradients:magnitude"], *suff[PAD]["attention_rollout:magnitude"],
          *suff[REMOVE]["integrated_gradients:magnitude"], *suff[REMOVE]["attention_rollout:magnitude"])


def test_gradient_x_input_the_one_signed_score_below_its_magnitude():
    gxi = {run: paired(run, "gradient_x_input:signed", "gradient_x_input:magnitude") for run in (PAD, REMOVE)}
    others = {run: [paired(run, f"{m}:signed", f"{m}:magnitude") for m in ("integrated_gradients", "attnlrp")]
              for run in (PAD, REMOVE)}
    for run in (PAD, REMOVE):
        assert told_apart(gxi[run]) and gxi[run][0] < 0
        assert all(told_apart(pair) and pair[0] > 0 for pair in others[run])
    tests = {run: sign_test(run, "gradient_x_input:signed", "gradient_x_input:magnitude") for run in (PAD, REMOVE)}
    assert all(p >= 0.05 for _, _, p in tests.values())  # the sign test does not tell them apart
    mean = {run: {m: faithfulness(run)[f"gradient_x_input:{m}"]["aopc"].mean() for m in ("signed", "magnitude")}
            for run in (PAD, REMOVE)}
    text = flat(findings())
    claim(text, "**Gradient × input is the one signed score that does worse than its magnitude**: {} against {} "
                "under `pad` (paired {} [{}, {}]) and {} against {} under `remove` ({} [{}, {}]), where IG's and "
                "AttnLRP's signed scores do better than theirs ({} [{}, {}] and {} [{}, {}] under `pad`).",
          mean[PAD]["signed"], mean[PAD]["magnitude"], *gxi[PAD], mean[REMOVE]["signed"], mean[REMOVE]["magnitude"],
          *gxi[REMOVE], *others[PAD][0], *others[PAD][1])
    claim(text, "Under `pad` the gap is barely told apart: its interval ends {} short of 0", -gxi[PAD][2])
    claim(text, "(the signed score ahead on {} and {} of the {} questions, p = {} and {})", tests[PAD][0],
          tests[REMOVE][0], len(rows(PAD, "id")), tests[PAD][2], tests[REMOVE][2])


def test_attention_tracing_and_rollout_against_random():
    tracing = {run: paired(run, "attention_tracing:magnitude", "random") for run in (PAD, REMOVE)}
    rollout = paired(PAD, "attention_rollout:magnitude", "random")
    assert not told_apart(tracing[PAD]) and not told_apart(tracing[REMOVE]) and told_apart(rollout)
    claim(flat(findings()), "**Attention tracing is not told apart from random** under either operator (paired {} "
                            "[{}, {}] under `pad`, {} [{}, {}] under `remove`), as Wu & Ong found on classification; "
                            "rollout is (paired {} [{}, {}] under `pad`).", *tracing[PAD], *tracing[REMOVE], *rollout)


def test_where_the_sign_test_and_the_interval_disagree():
    disagree = {}
    for run in (PAD, REMOVE):
        names = list(faithfulness(run))
        pairs = list(itertools.combinations(names, 2))
        disagree[run] = [(a, b) for a, b in pairs if told_apart(paired(run, a, b)) != (sign_test(run, a, b)[2] < 0.05)]
        assert not any(set(pair) & set(SIGNED) for pair in disagree[run])  # "all among the weaker methods"
    gradient = paired(PAD, "gradient:magnitude", "random")
    rollout = paired(PAD, "gradient_x_input:magnitude", "attention_rollout:magnitude")
    ahead, behind, p = sign_test(PAD, "gradient_x_input:magnitude", "attention_rollout:magnitude")
    assert told_apart(gradient) and not told_apart(rollout) and behind > ahead and p < 0.05
    text = flat(findings())
    claim(text, "**The sign test and the interval disagree on {} of the {} pairs under `pad` and {} under `remove`**",
          len(disagree[PAD]), len(pairs), len(disagree[REMOVE]))
    claim(text, "(gradient sensitivity against random: {} [{}, {}], sign test p = {}: a few questions with large drops "
                "carry the mean)", *gradient, sign_test(PAD, "gradient:magnitude", "random")[2])
    claim(text, "(gradient × input, magnitude, against rollout: rollout ahead on {} of the {}, p = {}, while the mean "
                "difference, {} [{}, {}], covers 0)", behind, ahead + behind, p, *rollout)


# ---------------------------------------------------------------------------------------------- NAOPC on the first 100

NAOPC = "squad-dev-100-naopc-pad"


def test_the_naopc_table_is_the_rows():
    found = table(findings(), "| method, ranking | NAOPC | AOPC (the same 100) |")
    values = faithfulness(NAOPC)
    assert sorted(found) == sorted(LABELS[name] if name != "random" else "Random" for name in values)
    for name, measures in values.items():
        label = LABELS[name] if name != "random" else "Random"
        assert found[label] == [cell(interval(measures["naopc"])), cell(interval(measures["aopc"]))], label


def test_naopc_and_aopc_tell_the_same_pairs_apart_and_differ_only_where_neither_does():
    values = faithfulness(NAOPC)
    names = list(values)
    apart, swapped = 0, []
    for a, b in itertools.combinations(names, 2):
        by_aopc, by_naopc = paired(NAOPC, a, b, "aopc"), paired(NAOPC, a, b, "naopc")
        assert told_apart(by_aopc) == told_apart(by_naopc), (a, b)
        if told_apart(by_aopc):
            apart += 1
            assert np.sign(by_aopc[0]) == np.sign(by_naopc[0]), (a, b)
        if np.sign(by_aopc[0]) != np.sign(by_naopc[0]):
            swapped.append({a, b})
    assert swapped == [{"gradient:magnitude", "gradient_x_input:magnitude"},
                       {"gradient_x_input:magnitude", "attention_rollout:magnitude"}]
    mean = {name: {m: values[name][m].mean() for m in ("aopc", "naopc")} for name in names}
    rollout, gradient, gxi = "attention_rollout:magnitude", "gradient:magnitude", "gradient_x_input:magnitude"
    text = flat(findings())
    claim(text, "NAOPC and AOPC tell the same {} of the {} pairs apart (paired 95 % intervals over the {} questions), "
                "each the same way round.", apart, len(names) * (len(names) - 1) // 2, len(rows(NAOPC, "id")))
    claim(text, "Attention rollout, magnitude against Gradient × input, magnitude (AOPC {} and {}, NAOPC {} and {}; "
                "paired NAOPC {} [{}, {}], AOPC {} [{}, {}]) and Gradient sensitivity, magnitude against Gradient × "
                "input, magnitude (AOPC {} and {}, NAOPC {} and {}; paired NAOPC {} [{}, {}], AOPC {} [{}, {}]).",
          mean[rollout]["aopc"], mean[gxi]["aopc"], mean[rollout]["naopc"], mean[gxi]["naopc"],
          *paired(NAOPC, rollout, gxi, "naopc"), *paired(NAOPC, rollout, gxi, "aopc"),
          mean[gradient]["aopc"], mean[gxi]["aopc"], mean[gradient]["naopc"], mean[gxi]["naopc"],
          *paired(NAOPC, gradient, gxi, "naopc"), *paired(NAOPC, gradient, gxi, "aopc"))
    random = interval(values["random"]["naopc"])
    assert random[2] < 0.5  # "a little below its middle"
    lrp = paired(NAOPC, "attnlrp:signed", "random", "naopc")
    assert told_apart(lrp)
    claim(text, "Random deletion sits at {} [{}, {}] of each question's range, a little below its middle; AttnLRP, "
                "signed at {}, nearer the best ordering the search finds than random (paired {} [{}, {}]), and "
                "Integrated Gradients, signed at {}.", *random, mean["attnlrp:signed"]["naopc"], *lrp,
          mean["integrated_gradients:signed"]["naopc"])


# ---------------------------------------------------------------------------------------------- sanity on the first 10

SANITY = "squad-dev-10-sanity"
STEPS = ["QA head", "block 5", "block 4", "block 3", "block 2", "block 1", "block 0", "embeddings"]


def cascade(entry: str) -> tuple[np.ndarray, np.ndarray]:
    """Per question and step, the cascade's ρ (NaN where undefined) and top-k overlap."""
    cells = rows(SANITY, "sanity")
    rho = np.array([[np.nan if v is None else v for v in c["entries"][entry]["cascade"]["spearman"]] for c in cells])
    return rho, np.array([c["entries"][entry]["cascade"]["top_k_overlap"] for c in cells], dtype=float)


def test_the_sanity_table_is_the_rows():
    cells = rows(SANITY, "sanity")
    assert cells[0]["parts"] == STEPS and cells[0]["verdict_step"] == STEPS.index("block 0")
    found = table(findings(), "| method, ranking | … QA head |")
    for entry in cells[0]["entries"]:
        rho, overlap = cascade(entry)
        label = LABELS[entry] if entry != "random" else "Random"
        expected = [shown(float(np.nanmean(rho[:, step])), 2) for step in range(len(STEPS))]
        assert found[label] == [*expected, f"{100 * overlap[:, STEPS.index('block 0')].mean():.0f} %"], label


def test_the_sanity_sentences_are_the_rows():
    step = STEPS.index("block 0")
    entries = [e for e in rows(SANITY, "sanity")[0]["entries"] if e != "random"]
    at_verdict = {e: interval(cascade(e)[0][:, step], seed=step) for e in entries}  # the report seeds step i with i
    assert all(found[2] < 0.5 for found in at_verdict.values())  # every method's interval under 0.5
    highest = max(entries, key=lambda e: at_verdict[e][0])
    assert highest == "gradient_x_input:magnitude"
    means = {e: np.nanmean(cascade(e)[0], axis=0) for e in entries}
    for e in MAGNITUDES:  # keep a mean ρ of 0.5 or more down to block 2 or 1
        last = max(i for i in range(len(STEPS)) if all(means[e][: i + 1] >= 0.5))
        assert STEPS[last] in ("block 2", "block 1"), e
    text = flat(findings())
    claim(text, "**Every method passes; random fails**, as it must (ρ {})", np.nanmean(cascade("random")[0][:, step]))
    claim(text, "(the highest, gradient × input by magnitude, {} [{}, {}])", *at_verdict[highest])
    claim(text, "AttnLRP's and IG's signed scores lose their order once the top two blocks are random (ρ {} and {} at "
                "block 4)", means["attnlrp:signed"][2], means["integrated_gradients:signed"][2])
    rho, overlap = cascade("attention_tracing:magnitude")
    claim(text, "**Attention tracing keeps {} % of its top-5 words with every block random** (ρ {})",
          100 * overlap[:, step].mean(), np.nanmean(rho[:, step]))


def test_the_methods_pages_sanity_sentence_reads_its_own_table():
    """docs/methods.md's one-question example: which entries keep ρ ≥ 0.5 until block 0, where the others fall under
    it, and the least ρ with the QA head random, as the table beside the sentence has them."""
    text = METHODS.read_text(encoding="utf-8")
    found = {label: [float(v.replace("*", "").replace(MINUS, "-")) for v in values]
             for label, values in table(text, "| entry | QA head | block 5 |").items()}
    steps = STEPS
    falls = {label: next((steps[i] for i, v in enumerate(values) if v < 0.5), None) for label, values in found.items()}
    keep = [label for label, step in falls.items() if step == "block 0"]
    assert keep == ["Gradient sensitivity, magnitude", "Gradient × input, magnitude", "Attention tracing, magnitude",
                    "Attention rollout, magnitude"]
    sentence = flat(text)
    assert ("gradient sensitivity, gradient × input by magnitude and the attention methods keep ρ ≥ 0.5 until block 0 "
            "is randomised too") in sentence
    at_block_1 = [found[label][steps.index("block 1")] for label in keep]
    claim(sentence, "({}–{} with the head and blocks 5–1 random)", min(at_block_1), max(at_block_1))
    ig, lrp = found["Integrated Gradients, magnitude"], found["AttnLRP, magnitude"]
    claim(sentence, f"IG's magnitude falls under 0.5 once {falls['Integrated Gradients, magnitude']} is random ({{}}) "
                    f"and AttnLRP's magnitude once {falls['AttnLRP, magnitude']} is ({{}})",
          ig[steps.index(falls["Integrated Gradients, magnitude"])], lrp[steps.index(falls["AttnLRP, magnitude"])])
    signed = {label: falls[f"{label}, signed"] for label in ("Gradient × input", "Integrated Gradients", "AttnLRP")}
    assert signed == {"Gradient × input": "block 5", "Integrated Gradients": "block 4", "AttnLRP": "block 4"}
    assert ("the signed rankings lose their order after the top block or two (under 0.5 from block 5 for gradient × "
            "input, from block 4 for IG and AttnLRP)") in sentence
    claim(sentence, "no method's explanation depends on the QA head (ρ ≥ {} with it random",
          min(values[0] for label, values in found.items() if label != "Random"))


# ---------------------------------------------------------------------------------------------- the quantifier contrast

CONTRAST = "squad-dev-quantifier-contrast"


def contrast(name: str) -> np.ndarray:
    """Per question and layer, the contrast cell's list `name` (other numbers' and foil's shares, lens margins)."""
    return np.array([[np.nan if v is None else v for v in c[name]] for c in rows(CONTRAST, "contrast")], dtype=float)


def shares(column: str) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in r] for r in rows(CONTRAST, column)], dtype=float)


def test_the_contrast_runs_counts_and_scores():
    manifest = json.loads((RUNS / CONTRAST / "manifest.json").read_text())
    em, f1 = (100 * np.mean(rows(CONTRAST, name)) for name in ("em", "f1"))
    text = flat(findings())
    claim(text, "the first {} how-many / how-much questions of SQuAD v1.1 dev, {} skipped because their passage has no "
                "other number", manifest["data"]["limit"], len(manifest["skipped"]))
    claim(text, "EM {}, F1 {} over the {}.", em, f1, len(rows(CONTRAST, "id")))
    claim(text, "with the exact match at {} % says \"holds\"", em)


def test_the_other_numbers_share_by_layer_and_by_thirds():
    other = contrast("category_other_numbers")
    layers = [interval(other[:, layer], seed=layer) for layer in range(other.shape[1])]  # the report's seeds
    block_4, embeddings = 5, 0
    paired_with_embeddings = [interval(other[:, layer] - other[:, embeddings]) for layer in range(1, 6)]
    assert [told_apart(found) for found in paired_with_embeddings] == [False, False, False, False, True]
    report_thirds = interval(other[:, 4:6].mean(axis=1) - other[:, 0:2].mean(axis=1))  # six layers, last left out
    page_thirds = interval(other[:, 5:7].mean(axis=1) - other[:, 0:3].mean(axis=1))  # embeddings-block 1, blocks 4-5
    assert told_apart(report_thirds) and not told_apart(page_thirds)
    text = flat(findings())
    claim(text, "Their share of the contrast's top-5, with 95 % intervals: {} % [{}, {}] at the embeddings, {}, {}, {} "
                "and {} % at blocks 0–3, **{} % [{}, {}] at block 4**, and {} at the last block",
          *layers[0], *(layers[i][0] for i in range(1, 5)), *layers[block_4], layers[6][0])
    claim(text, "only block 4 is told apart from the embeddings ({} points [{}, {}]); blocks 0–3 are not (each paired "
                "interval covers 0)", *paired_with_embeddings[-1])
    claim(text, "so it compares the embeddings and block 0 ({} %) with blocks 3–4 ({} %), {} points [{}, {}] question "
                "by question", other[:, 0:2].mean(), other[:, 4:6].mean(), *report_thirds)
    claim(text, "the embeddings to block 1 against blocks 4–5 with the last block's 0 counted, the share goes from {} % "
                "to {} %, {} points [{}, {}]: not told apart.", other[:, 0:3].mean(), other[:, 5:7].mean(),
          *page_thirds)
    per_question = {layer: 5 * other[:, layer].mean() / 100 for layer in (block_4, embeddings)}  # of a top-5
    claim(text, "one such number among the top 5 words in about every {}th question at block 4 ({} a question), "
                "against every {}th at the embeddings ({})", round(1 / per_question[block_4]), per_question[block_4],
          round(1 / per_question[embeddings]), per_question[embeddings])
    foil = contrast("category_foil")
    means = foil.mean(axis=0)
    assert len({round(m, 1) for m in means[:6]}) == 1  # flat up to block 4
    claim(text, "{} % [{}, {}] flat up to block 4 and {} % at the last block", *interval(foil[:, 0], seed=0),
          means[6])


def test_where_the_margin_is_won():
    margin = contrast("lens_margin")
    layers = [interval(margin[:, layer], seed=layer) for layer in range(margin.shape[1])]
    assert [told_apart(found) for found in layers] == [False, False, False, False, True, True, True]
    leads = (margin > 0).sum(axis=0)
    n = margin.shape[0]
    p_early = [stats.binomtest(int(k), n).pvalue for k in leads[:4]]
    assert min(p_early) >= 0.05
    text = flat(findings())
    claim(text, "not told apart from 0 up to block 2 ({}, {}, {} and {} at the embeddings and blocks 0–2, each 95 % "
                "interval covering 0), {} [{}, {}] at block 3, {} at block 4 and {} at block 5.",
          *(found[0] for found in layers[:4]), *layers[4], layers[5][0], layers[6][0])
    ahead = 100 * leads / n
    claim(text, "The answer leads the distractor in {}–{} % of the questions up to block 2 (not told apart from half: "
                "sign tests p ≥ {}), {} % at block 3, {} % at block 4 and {} % at block 5",
          ahead[:4].min(), ahead[:4].max(), min(p_early), ahead[4], ahead[5], ahead[6])


def test_what_separates_them():
    supporting, query, answer = (np.nanmean(shares(f"category_{c}"), axis=0)
                                 for c in ("supporting", "query", "answer"))
    foil = contrast("category_foil").mean(axis=0)
    up_to_block_4 = slice(0, 6)
    assert int(np.argmax(query[up_to_block_4])) == 3  # the query share peaks at block 2
    claim(flat(findings()), "supporting words {}–{} % and query words {}–{} % up to block 4 (the query share peaks at "
                            "block 2, {} %), the answer's own words {}–{} %; at the last block the answer's words take "
                            "{} % and the distractor's {} %.",
          supporting[up_to_block_4].min(), supporting[up_to_block_4].max(), query[up_to_block_4].min(),
          query[up_to_block_4].max(), query[3], answer[up_to_block_4].min(), answer[up_to_block_4].max(), answer[6],
          foil[6])


# ---------------------------------------------------------------------------------------------- every decimal is read

# decimals these sections quote that the rows do not hold: wall times, a trial before these runs, the folder's size,
# the sanity check's threshold and SQuAD's version
NOT_FROM_ROWS = [r"20\.6 and 19\.8 minutes", r"7\.7 minutes", r"\+0\.009 \[−0\.08, 0\.10\]", r"9\.6 MB", r"v1\.1",
                 r"(?:of|under|≥) 0\.5\b"]
SECTIONS = [("## Which explanations find the context", "**From the last stop's runs**"),
            ("## Why this number and not the other", None)]


def _checks() -> list[Callable[[], None]]:
    return [test_the_rankings_table_is_the_rows, test_the_probability_before_deletion,
            test_the_ranking_decides_as_much_as_the_method, test_attnlrp_signed_ahead_of_ig_signed_under_both_operators,
            test_which_top_words_alone_hold_the_answer_better_than_the_passage,
            test_gradient_x_input_the_one_signed_score_below_its_magnitude,
            test_attention_tracing_and_rollout_against_random, test_where_the_sign_test_and_the_interval_disagree,
            test_the_naopc_table_is_the_rows, test_naopc_and_aopc_tell_the_same_pairs_apart_and_differ_only_where_neither_does,
            test_the_sanity_table_is_the_rows, test_the_sanity_sentences_are_the_rows,
            test_the_contrast_runs_counts_and_scores, test_the_other_numbers_share_by_layer_and_by_thirds,
            test_where_the_margin_is_won, test_what_separates_them, test_the_findings_say_how_many_twins_each_run_holds,
            lambda: [test_each_verdict_quoted_is_the_reports_and_its_numbers_the_rows(op) for op in ("pad", "remove")]]


def test_every_decimal_quoted_is_read_back(monkeypatch):
    """Each decimal number of these sections, altered alone, fails one of the tests above (but those listed in
    NOT_FROM_ROWS, which the rows do not hold)."""
    original = findings()
    for check in _checks():
        check()  # all pass on the text as it is
    unread = []
    for start, end in SECTIONS:
        begin = original.index(start)
        stop = original.index(end, begin) if end else len(original)
        section = original[begin:stop]
        elsewhere = {i for pattern in NOT_FROM_ROWS for m in re.finditer(pattern, section) for i in range(*m.span())}
        positions = [begin + found.end() - 1 for found in re.finditer(r"\d+\.\d+", section)
                     if found.start() not in elsewhere]
        unread += read_by_no_check(original, positions, _checks(), lambda text: monkeypatch.setattr(
            sys.modules[__name__], "findings", lambda: text))
    monkeypatch.undo()
    assert unread == [], f"quoted but read back by no test: {unread}"


def read_by_no_check(original: str, positions: list[int], checks: list[Callable[[], None]],
                     install: Callable[[str], None]) -> list[str]:
    """Each decimal's last digit at `positions` of `original` altered alone (install puts the altered text where
    the checks read findings): the text around each one no check then fails on."""
    unread = []
    for at in positions:
        install(original[:at] + ("1" if original[at] == "0" else "0") + original[at + 1:])
        if not any(_fails(check) for check in checks):  # any() stops at the first check that fails
            unread.append(original[max(0, at - 40): at + 10].replace("\n", " "))
    return unread


def _fails(check: Callable[[], None]) -> bool:
    try:
        check()
    except AssertionError:
        return True
    return False
