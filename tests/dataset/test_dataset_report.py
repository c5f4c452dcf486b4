"""Dataset aggregates and the report, on runs written row by row with values worked out by hand."""
import csv
import dataclasses
import json
import math

import numpy as np
import pytest

from rcqa.cli import main
from rcqa.dataset import published, store
from rcqa.dataset.aggregate import load_run, select, summarize
from rcqa.dataset.conclusions import thirds, verdicts
from rcqa.dataset.faithfulness import record
from rcqa.intervals import defined_means, mean_with_interval
from rcqa.dataset.layers import decided_at
from rcqa.dataset.report import build, write
from rcqa.faithfulness.report import faithfulness_report
from rcqa.figures import image_export_available
from tests.helpers.hand_runs import HAND_ROWS, LAYERS, MANIFEST, row, write_manifest_json, write_run
from tests.helpers.handmade_comparison import handmade_comparison

NAN = float("nan")


@pytest.fixture
def hand_run(tmp_path):
    return write_run(tmp_path / "hand", HAND_ROWS)


def test_summary_averages_defined_values_only(hand_run):
    summary = summarize(load_run(hand_run))
    assert summary.n == 3 and summary.n_failed == 1
    assert summary.exact_match == pytest.approx(100 / 3) and summary.f1 == pytest.approx(50)
    # layer "block 0": b is undefined there, so the mean is over a and c only
    assert summary.roles["answer"] == pytest.approx([10, 30, 70])
    assert summary.roles["query"] == pytest.approx([50, 15, 10])
    assert summary.roles["supporting"] == pytest.approx([30, 35, 70 / 3])
    assert summary.pos["entity"] == pytest.approx([100] * 3) and summary.pos["verb"] == pytest.approx([0] * 3)
    assert summary.answer_pos["entity"] == pytest.approx(75) and summary.answer_pos["verb"] == pytest.approx(25)
    full = np.array([[np.nan if x is None else x for x in line] for line in summary.jsd["full"]])
    assert full[0, 2] == pytest.approx((.4 + .6 + .4) / 3) and full[0, 1] == pytest.approx(.2)
    assert full[1, 1] == pytest.approx(0)  # a and c define it
    assert summary.jsd_range["full"] == {"min": pytest.approx(.2), "max": pytest.approx(1.4 / 3)}
    assert summary.question_types == {"what": {"n": 1, "exact_match": 100, "f1": 100},
                                         "how many": {"n": 1, "exact_match": 0, "f1": 50},
                                         "who": {"n": 1, "exact_match": 0, "f1": 0}}
    quantifier = summary.quantifier
    assert quantifier["n_questions"] == 1 and quantifier["exact_match"] == 0 and quantifier["f1"] == 50
    assert quantifier["confidence"] == pytest.approx(30)
    assert quantifier["ratio"] == pytest.approx([10, 30, 50]) and quantifier["ratio_ci"] == [[None, None]] * 3
    assert summary.completeness["median"] == pytest.approx([.001, .002, .003])
    assert summary.completeness["max"] == pytest.approx([.004, .02, .003])
    # two finished sessions: 40 s for 4 examples (the failure counts as work done); the unfinished one is left out
    assert summary.seconds == 40 and summary.examples_per_hour == pytest.approx(360)
    assert summary.fingerprint == "abc" and summary.settings.top_k == 5
    assert summary.model == "default" and summary.data.to_dict() == MANIFEST["data"] and summary.layers == LAYERS
    assert summary.completeness["median_steps"] == [8, 8, 16]
    assert summary.roles_ci["answer"][1] == [20, 40]  # two values: the bootstrap's range is theirs
    assert summary.pos_ci["entity"] == [[100, 100]] * 3


def test_a_run_with_no_rows_yet(tmp_path):
    folder = tmp_path / "empty"
    (folder / store.SHARDS).mkdir(parents=True)
    write_manifest_json(folder, {**MANIFEST, "runs": [], "failed": []})
    summary = summarize(load_run(folder))
    assert (summary.n, summary.exact_match, summary.layers) == (0, None, [])
    assert summary.completeness == {"median": [], "max": [], "median_steps": []}
    assert (summary.seconds, summary.examples_per_hour) == (0, None)
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        load_run(tmp_path / "nothing")


def test_report_of_a_run_without_readable_rows_is_one_sentence_and_exit_2(hand_run, tmp_path, capsys):
    empty = tmp_path / "empty"
    (empty / store.SHARDS).mkdir(parents=True)
    write_manifest_json(empty, {**MANIFEST, "runs": [], "failed": []})
    unreadable = write_run(tmp_path / "unreadable", HAND_ROWS)
    for shard in (unreadable / store.SHARDS).glob("*.parquet"):
        shard.write_bytes(b"half a shard")
    for runs in ([empty], [unreadable], [hand_run, empty]):  # before: AttributeError from the first figure
        assert main(["report", *map(str, runs), "--out", str(tmp_path / "r"), "--no-images"]) == 2
        said = capsys.readouterr().err
        assert said == f"error: {runs[-1]} holds no readable rows yet (nothing explained, or its shards cannot be " \
                       "read): run `python -m rcqa reproduce` into it first, which resumes it\n"
    assert main(["report", str(tmp_path / "nothing"), "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.endswith("holds no manifest.json: not a run folder\n")


def test_a_faithfulness_report_becomes_one_cell():
    # the handmade comparison (tests/helpers/handmade_comparison.py) with AOPC's bounds searched as 0 … 0.5; every
    # number worked out by hand: random's are the means of its two draws
    searched = faithfulness_report(dataclasses.replace(handmade_comparison(), aopc_bounds=(0.0, 0.5)))
    cell = json.loads(record(searched))
    assert (cell["k"], cell["original_probability"], cell["operator"], cell["spare_answer"]) == ([0, 1, 2, 3], .8,
                                                                                                 "pad", True)
    by_hand = {"gradient": ((.5, .15, .35, .7), [.8, .5, .3, .2], [0, 1, 1, 1]),
               "attention_tracing": ((0, .65, 0, 0), [.8, .8, .8, .8], [0, 0, 0, 0]),
               "random": ((.25, .55, .15, .3), [.8, .7, .6, .5], [0, 0, 0, .5])}
    assert list(cell["methods"]) == list(by_hand)
    for name, (summaries, curve, flipped) in by_hand.items():
        found = cell["methods"][name]
        assert [found[s] for s in ("comprehensiveness", "sufficiency", "aopc", "naopc")] == pytest.approx(summaries)
        assert found["span_probability"] == pytest.approx(curve) and found["flipped"] == flipped
    unsearched = json.loads(record(faithfulness_report(handmade_comparison())))
    assert {found["naopc"] for found in unsearched["methods"].values()} == {None}


def test_intervals_bracket_the_mean_and_degenerate_cases():
    found = mean_with_interval(np.array([0.0, 20, 10, 5, 15, np.nan]))
    assert found["mean"] == pytest.approx(10) and found["n"] == 5
    assert 0 <= found["low"] < 10 < found["high"] <= 20
    # the standard error of this mean is 7.07/sqrt(5) = 3.16, so a 95 % interval is roughly +-6
    assert 3 < found["high"] - found["low"] < 20
    assert mean_with_interval(np.array([4.0, 4.0, 4.0])) == {"mean": 4, "low": 4, "high": 4, "n": 3}
    assert mean_with_interval(np.array([4.0, np.nan]))["low"] is None
    assert mean_with_interval(np.array([np.nan]))["mean"] is None
    assert mean_with_interval(np.array([1.0, 5, 9]), seed=3) == mean_with_interval(np.array([1.0, 5, 9]), seed=3)


def test_mean_matrix_leaves_undefined_entries_out():
    stack = np.array([[[0, 1], [1, np.nan]], [[0, 3], [3, np.nan]]])
    assert np.allclose(defined_means(stack), [[0, 2], [2, np.nan]], equal_nan=True)


def test_selection_by_type_correctness_and_quantifier(hand_run):
    rows = load_run(hand_run).rows
    assert select(rows, question_type="who")["id"].to_pylist() == ["c"]
    assert select(rows, correct=True)["id"].to_pylist() == ["a"]
    assert select(rows, correct=False)["id"].to_pylist() == ["b", "c"]
    assert select(rows, quantifier=True, correct=False)["id"].to_pylist() == ["b"]
    assert select(rows, question_type="when").num_rows == 0


def test_conclusions_on_the_hand_run(hand_run):
    found = {v.claim.split(" (")[0]: v for v in verdicts(summarize(load_run(hand_run)))}
    assert thirds([50, 15, 10]) == (50, 10)
    assert thirds([None, 4, 1, 2, 3, None]) == (4, 3)  # undefined layers are left out of a third
    assert found["Early layers look at the question's words"].holds is True
    assert found["Later layers settle on the answer"].holds is True
    # max JSD with top-k removed: a's .1 (b's full .6 is only in full); kept: mean of .5, .6 (b), .5 (c)
    assert found["Layers differ in their top words but agree on the rest"].holds is True
    assert found["On quantifier questions, later layers look at the passage's numbers"].holds is True


def test_conclusions_say_when_a_run_cannot_tell(tmp_path):
    rows = [row("x", answer=(None, None, None), supporting=(None,) * 3, query=(None,) * 3)]
    found = verdicts(summarize(load_run(write_run(tmp_path / "empty", rows * 1 + [row("y")]))))
    assert found[3].holds is None and found[3].evidence == "undefined in this run"  # no quantifier questions


def test_report_compares_two_runs_and_opens_offline(hand_run, tmp_path):
    reversed_rows = [row(r["id"], answer=r["category_query"], query=r["category_answer"],
                         supporting=r["category_supporting"], answer_attribution=r["answer_attribution"][::-1],
                         answer_ceiling=r["answer_ceiling"]) for r in HAND_ROWS]
    other = write_run(tmp_path / "other", reversed_rows,
                      {**MANIFEST, "analysis": {**MANIFEST["analysis"], "preset": "paper-code"}})
    out = tmp_path / "report"
    summary = write([hand_run, other], out, images=False)
    stored = json.loads((out / "summary.json").read_text())
    for key in ("n", "n_failed", "exact_match", "f1", "layers", "roles", "roles_ci", "jsd", "pos",
                "quantifier", "settings", "model", "fingerprint", "seconds", "examples_per_hour"):
        assert key in stored
    assert stored["quantifier"]["ratio_ci"] == [[None, None]] * 3  # NaN never reaches the JSON
    verdict = {run: {v["claim"].split(" (")[0]: v["holds"] for v in found}
               for run, found in stored["conclusions"].items()}
    assert verdict["hand (default)"]["Later layers settle on the answer"] is True
    # its answer's share of the attribution falls: 50 % of the first layer's on average, 15 % of the last one's
    assert verdict["other (paper-code)"]["Later layers settle on the answer"] is False
    assert list(stored["compared_runs"]) == ["other (paper-code)"]
    comparison = (out / "tables" / "published-comparison.csv").read_text()
    assert "query share of top-k at depth 0,50.0,22.46" in comparison  # ours at the embeddings beside MLRC's
    assert {p.name for p in (out / "tables").iterdir()} >= {"dataset-roles.csv", "dataset-jsd-full-hand-default.csv",
                                                            "dataset-jsd-full-other-paper-code.csv", "conclusions.csv"}
    page = (out / "report.html").read_text()
    assert "<script src" not in page and "Plotly.newPlot" in page and len(page) > 3_000_000  # plotly.js inline
    assert "Do the paper's conclusions hold?" in page and summary.subject.n == 3


@pytest.mark.skipif(not image_export_available(), reason="kaleido finds no Chromium")
def test_report_figures_as_png_and_svg(hand_run, tmp_path):
    write([hand_run], tmp_path / "report")
    png = (tmp_path / "report" / "figures" / "dataset-roles.png").read_bytes()
    assert png.startswith(b"\x89PNG")
    page = (tmp_path / "report" / "report.html").read_text()
    assert page.count("<svg") >= 7 and "<script" not in page


def test_report_cli(hand_run, tmp_path, capsys):
    assert main(["report", str(hand_run), "--out", str(tmp_path / "r"), "--no-images"]) == 0
    assert "report of 3 examples" in capsys.readouterr().err
    charts = build([hand_run])[1]
    assert all(not math.isnan(float(v)) for v in charts[0].data["mean"].dropna())


def faithfulness_cell(gradient: dict, random: dict, k: list[int]) -> str:
    return json.dumps({"k": k, "original_probability": gradient["span_probability"][0], "operator": "pad",
                       "methods": {"gradient": gradient, "random": random}})


def test_faithfulness_over_the_run_method_against_random(tmp_path):
    cells = [
        faithfulness_cell({"aopc": .5, "comprehensiveness": .4, "sufficiency": .1, "span_probability": [.8, .4, .2],
                           "flipped": [0, 1, 1]},
                          {"aopc": .1, "comprehensiveness": .2, "sufficiency": .3, "span_probability": [.8, .7, .6],
                           "flipped": [0, 0, .2]}, [0, 1, 2]),
        faithfulness_cell({"aopc": .2, "comprehensiveness": .3, "sufficiency": .2, "span_probability": [.6, .5],
                           "flipped": [0, 0]},
                          {"aopc": .3, "comprehensiveness": .1, "sufficiency": .1, "span_probability": [.6, .55],
                           "flipped": [0, .4]}, [0, 1]),
    ]
    rows = [{**row(i), "faithfulness": cell} for i, cell in zip("xy", cells)] + [row("z")]  # z: not compared
    folder = write_run(tmp_path / "f", rows)
    found = summarize(load_run(folder)).faithfulness
    assert found["n"] == 2 and found["k"] == [0, 1, 2] and found["original_probability"] == pytest.approx(.7)
    gradient, random = found["methods"]["gradient"], found["methods"]["random"]
    assert gradient["aopc"]["mean"] == pytest.approx(.35) and random["sufficiency"]["mean"] == pytest.approx(.2)
    assert gradient["beats_random"] == 50 and random["beats_random"] is None
    assert gradient["span_probability"] == pytest.approx([.7, .45, .2])  # k = 2: only x reaches it
    assert gradient["flip_rate"] == pytest.approx([0, 50, 100]) and random["flip_rate"] == pytest.approx([0, 20, 20])
    assert summarize(load_run(write_run(tmp_path / "none", HAND_ROWS))).faithfulness is None
    write([folder], tmp_path / "report", images=False)
    assert "Which explanation to trust?" in (tmp_path / "report" / "report.html").read_text()
    table = list(csv.reader((tmp_path / "report" / "tables" / "faithfulness.csv").read_text().splitlines()))
    method, comprehensiveness, sufficiency, aopc, interval, beats = table[1]
    # a run made before each method was ranked both ways: gradient's one ranking was its magnitude
    assert (method, float(comprehensiveness), float(sufficiency), float(aopc), beats) == (
        "Gradient sensitivity, magnitude", pytest.approx(.35), pytest.approx(.15), pytest.approx(.35), "50.0")
    # two questions: no paired interval, so the verdict tells nothing apart and says why
    assert "On 2 questions no two methods are told apart" in (tmp_path / "report" / "report.html").read_text()
    paired = list(csv.reader((tmp_path / "report" / "tables" / "faithfulness_paired.csv").read_text().splitlines()))
    assert paired[1][:2] == ["Gradient sensitivity, magnitude", "Random"] and paired[1][-1] == "no"
    assert interval == "0.200 – 0.500"  # the bootstrap of two values: their range
    assert "could be deleted (the old protocol)" in (tmp_path / "report" / "report.html").read_text()  # no field: old


def lens_cell(head_f1: list, head_rank: list, probe_f1: list | None = None) -> str:
    def reader(name: str, f1: list | None, rank: list) -> dict:
        if f1 is None:
            return {f"lens_{name}_{field}": None for field in ("span", "probability", "final_answer_rank",
                                                                "final_answer_probability", "em", "f1")}
        return {f"lens_{name}_span": ["s"] * 3, f"lens_{name}_probability": [.5] * 3,
                f"lens_{name}_final_answer_rank": rank, f"lens_{name}_final_answer_probability": [.5] * 3,
                f"lens_{name}_em": [float(v == 1) if v is not None else None for v in f1], f"lens_{name}_f1": f1}
    return json.dumps({**reader("head", head_f1, head_rank), **reader("probe", probe_f1, [1, 1, 1])})


def knockout_cell(topk: list, random: list, bottomk: list, skip: list) -> str:
    return json.dumps({"knockout_unchanged_probability": .8, "knockout_k": 5, "knockout_draws": 5,
                       "knockout_baseline": "pad", "knockout_topk_flipped": topk, "knockout_topk_probability": [.1] * 3,
                       "knockout_bottomk_flipped": bottomk, "knockout_bottomk_probability": [.7] * 3,
                       "knockout_random_flip_rate": random, "knockout_random_probability_mean": [.6] * 3,
                       "knockout_random_probability_std": [.1] * 3, "skip_block_flipped": skip,
                       "skip_block_probability": [None, .5, .4]})


def test_what_layers_know_and_do_over_the_run(tmp_path):
    rows = [{**row("x"), "lens": lens_cell([0, .5, 1], [3, 1, 1], [.2, 1, 1]),
             "interventions": knockout_cell([True, True, False], [0, .2, .4], [False] * 3, [None, True, False])},
            {**row("y"), "lens": lens_cell([0, .25, 1], [2, 2, 1]),
             "interventions": knockout_cell([False, True, True], [0, 0, .2], [False, False, True], [None, True, True])},
            row("z")]
    folder = write_run(tmp_path / "layers", rows)
    summary = summarize(load_run(folder))
    head, probe = summary.lens["head"], summary.lens["probe"]
    assert head["n"] == 2 and probe["n"] == 1  # y has no probes
    assert head["f1"] == pytest.approx([0, 37.5, 100]) and head["exact_match"] == pytest.approx([0, 0, 100])
    assert head["final_answer_first"] == pytest.approx([0, 50, 100])
    assert head["decided_at"] == 2 and probe["decided_at"] == 1  # 37.5 < 90 % of 100; the probe's 100 at block 0
    knocked = summary.interventions
    assert knocked["n"] == 2 and knocked["k"] == 5 and knocked["unchanged_probability"] == pytest.approx(.8)
    assert knocked["flip_rate"]["topk"] == pytest.approx([50, 100, 50])
    assert knocked["flip_rate"]["random"] == pytest.approx([0, 10, 30])
    assert knocked["flip_rate"]["bottomk"] == pytest.approx([0, 0, 50])
    assert knocked["flip_rate"]["skip_block"][0] is None and knocked["flip_rate"]["skip_block"][1:] == [100, 50]
    assert decided_at([None, 10.0, 95.0, 100.0]) == 2 and decided_at([0.0, 0.0]) is None
    charts = {chart.name for chart in build([folder])[1]}
    assert {"dataset-lens", "dataset-interventions"} <= charts


def test_published_numbers_set_beside_ours_at_equal_depth(hand_run):
    from rcqa.dataset.published import comparison, depth

    assert [depth(i, 7) for i in (0, 3, 6)] == [0, .5, 1] and depth(0, 1) == 0
    assert depth(1, 3) == .5  # the hand run's three outputs: embeddings, block 0, block 1
    summary = summarize(load_run(hand_run))
    table = comparison(summary).set_index("measure")
    assert table.loc["answer share of top-k at depth 1", "ours"] == pytest.approx(70)  # the last layer's
    assert table.loc["answer share of top-k at depth 1", "published"] == 42.94
    assert table.loc["query share of top-k at depth 0", "ours"] == pytest.approx(50)
    assert table.loc["quantifier ratio at depth 0.92", "ours"] == pytest.approx(50)  # the paper's layer 10 of 12
    assert table.loc["JSD topk kept, max off the diagonal", "ours"] == pytest.approx(summary.jsd_range["topk_kept"]["max"])
    assert table.loc["JSD topk removed, min off the diagonal", "published"] == .09
    assert table.loc["EM on quantifier questions", "ours"] == 0 and table.loc["SQuAD v1.1 dev F1", "ours"] == 50
    assert set(table.source) == {published.PAPER, published.MLRC}


def test_layers_agree_beyond_their_top_words_only_when_strictly_closer():
    from types import SimpleNamespace

    from rcqa.dataset.conclusions import _agree_beyond_top

    def summary(removed, kept):  # the one field the check reads
        return SimpleNamespace(jsd_range={"topk_removed": {"max": removed}, "topk_kept": {"max": kept}})
    assert _agree_beyond_top(summary(.1, .2)).holds is True
    assert _agree_beyond_top(summary(.2, .2)).holds is False
    assert _agree_beyond_top(summary(.2, .2)).evidence == "top-k removed 0.200, top-k kept 0.200"
    for undefined in (summary(None, .2), summary(.1, None)):
        assert (_agree_beyond_top(undefined).holds, _agree_beyond_top(undefined).evidence) == (
            None, "undefined in this run")
