"""`python -m rcqa faithfulness`: the JSON it writes, field by field, and its errors."""
import json
from pathlib import Path

import pytest

from rcqa.cli import main
from rcqa.attribution.methods import COMPARED, METHODS
from rcqa.faithfulness.document import FaithfulnessReport
from rcqa.faithfulness.summaries import SUMMARIES
from rcqa.gallery import gallery_example

CURVE = {"span_probability", "flipped", "f1"}
SPREAD = {"mean", "std", "min", "max"}
# every method under each of its rankings: signed and magnitude where its scores carry a sign
ENTRIES = [f"{name}:{ranking}" for name in COMPARED for ranking in METHODS[name].rankings]


@pytest.fixture(scope="module")
def written(tiny_model_dirs, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("faithfulness")
    example = gallery_example("comet-who")
    (folder / "passage.txt").write_text(example.passage)
    status = main(["faithfulness", "--passage-file", str(folder / "passage.txt"), "--question", example.question,
                   "--json", str(folder / "out.json"), "--k", "4", "--draws", "3", "--model", tiny_model_dirs["bert"]])
    assert status == 0
    return folder / "out.json"


@pytest.fixture(scope="module")
def document(written):
    return json.loads(written.read_text())


def test_the_file_loads_as_a_report_and_saves_back_to_its_text(written, document, tmp_path):
    report = FaithfulnessReport.load(written)
    assert report.save(tmp_path / "again.json").read_text(encoding="utf-8") == written.read_text(encoding="utf-8")
    entry = report.methods["gradient_x_input:signed"]
    assert entry.versus_random.reading == document["methods"]["gradient_x_input:signed"]["versus_random"]["reading"]
    assert report.random.deletion.flipped.mean == document["random"]["deletion"]["flipped"]["mean"]
    assert report.protocol.seeds == [0, 1, 2] and report.header.answer.text == document["answer"]["answer"]


def test_every_method_has_its_scores_curves_and_summaries(document):
    tokens, words = len(document["tokens"]), len(document["passage_words"])
    assert list(document["methods"]) == ENTRIES
    assert {e for e in ENTRIES if e.endswith(":signed")} == {
        "integrated_gradients:signed", "gradient_x_input:signed", "attnlrp:signed"}
    for name, method in document["methods"].items():
        assert f"{method['method']}:{method['ranked_by']}" == name and method["ranked_by_description"]
        assert len(method["scores"]) == tokens and len(method["word_scores"]) == words
        assert max(abs(s) for s in method["scores"]) == pytest.approx(1.0)
        deletion = method["deletion"]
        assert deletion["k"] == [0, 1, 2, 3, 4] and CURVE <= deletion.keys()
        assert all(len(deletion[name]) == 5 for name in CURVE)
        assert all(isinstance(f, bool) for f in deletion["flipped"]) and all(0 <= f <= 1 for f in deletion["f1"])
        # nothing deleted: the original probability, the original answer
        assert deletion["span_probability"][0] == document["original"]["span_probability"]
        assert deletion["flipped"][0] is False and deletion["f1"][0] == 1.0
        by_fraction = method["deletion_by_fraction"]
        assert by_fraction["fraction"] == [0.01, 0.02, 0.05, 0.1, 0.2] and len(by_fraction["span_probability"]) == 5
        assert all(isinstance(method[name], float) for name in ("comprehensiveness", "sufficiency", "aopc"))
        versus = method["versus_random"]
        assert len(versus["drop_ratio"]) == 5 and versus["drop_ratio"][0] is None and versus["reading"]


def test_random_has_the_same_fields_as_mean_and_spread_over_its_draws(document):
    random = document["random"]
    assert len(random["scores"]) == 3 and len(random["rankings"]) == 3
    assert random["deletion"]["k"] == [0, 1, 2, 3, 4]
    for name in CURVE:
        assert random["deletion"][name].keys() == SPREAD and len(random["deletion"][name]["mean"]) == 5
    for name in ("comprehensiveness", "sufficiency", "aopc"):
        assert random[name].keys() == SPREAD | {"draws"} and len(random[name]["draws"]) == 3
        assert random[name]["min"] <= random[name]["mean"] <= random[name]["max"]
    assert document["protocol"]["seeds"] == [0, 1, 2] and document["protocol"]["operator"] == "pad"


def test_the_rank_correlations_are_square_over_the_methods(document):
    correlation = document["rank_correlation"]
    assert correlation["methods"] == ENTRIES
    for kind in ("spearman", "kendall"):
        matrix = correlation[kind]
        assert len(matrix) == len(ENTRIES) and all(row[i] == 1.0 for i, row in enumerate(matrix))
        assert all(matrix[i][j] == matrix[j][i] for i in range(len(matrix)) for j in range(len(matrix)))


def test_a_subset_of_methods_and_the_remove_operator(tiny_model_dirs, tmp_path, capsys):
    example = gallery_example("river-where")
    (tmp_path / "passage.txt").write_text(example.passage)
    status = main(["faithfulness", "--passage-file", str(tmp_path / "passage.txt"), "--question", example.question,
                   "--json", str(tmp_path / "out.json"), "--methods", "gradient", "attention_rollout", "--k", "2",
                   "--draws", "2", "--operator", "remove", "--spare-answer", "--model", tiny_model_dirs["bert"]])
    document = json.loads((tmp_path / "out.json").read_text())
    assert status == 0 and list(document["methods"]) == ["gradient:magnitude", "attention_rollout:magnitude"]
    assert document["protocol"]["operator"] == "remove" and document["protocol"]["spare_answer"] is True
    printed, random = capsys.readouterr().err, document["random"]
    # what it prints is what the file holds: every summary the file holds, by its label, in the file's order
    def listed(values: dict) -> str:
        return ", ".join(f"{SUMMARIES[name].label} {value:.3f}" for name, value in values.items()
                         if name in SUMMARIES and value is not None)

    random_means = {name: found["mean"] for name, found in random.items() if name in SUMMARIES and found}
    assert listed(random_means).startswith(f"comprehensiveness {random['comprehensiveness']['mean']:.3f}, sufficiency "
                                           f"{random['sufficiency']['mean']:.3f}, AOPC {random['aopc']['mean']:.3f}")
    assert f"random over 2 draws: {listed(random_means)}\n" in printed
    for name, entry in document["methods"].items():
        assert listed(entry).startswith(f"comprehensiveness {entry['comprehensiveness']:.3f}, sufficiency "
                                        f"{entry['sufficiency']:.3f}, AOPC {entry['aopc']:.3f}")
        assert f"{name}: {listed(entry)}. {entry['versus_random']['reading']}" in printed
    assert document["verdict"] in printed


def test_an_unknown_method_is_refused(tiny_model_dirs, tmp_path, capsys):
    (tmp_path / "passage.txt").write_text("The tower was built in 1872.")
    with pytest.raises(SystemExit):
        main(["faithfulness", "--passage-file", str(tmp_path / "passage.txt"), "--question", "When?", "--json",
              str(tmp_path / "out.json"), "--methods", "lrp", "--model", tiny_model_dirs["bert"]])
    assert "invalid choice: 'lrp'" in capsys.readouterr().err
