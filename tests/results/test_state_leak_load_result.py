"""rcqa.load_result on what the commands write: `lens --json` records its kind and loads back as the lens the Python
API computes; a file that holds no result (an older command's JSON, a report, not JSON at all) is refused with one
sentence naming what it seems to be and what writes results that load, never a KeyError."""
import json

import numpy as np
import pytest

import rcqa
from rcqa.cli import main
from rcqa.gallery import gallery_example
from rcqa.lens import AnswerLens, answer_lens
from rcqa.model import load_model


@pytest.fixture(scope="module")
def lens_file(tiny_model_dirs, tmp_path_factory):
    example = gallery_example("lighthouse-when")
    folder = tmp_path_factory.mktemp("lens")
    passage, out = folder / "passage.txt", folder / "lens.json"
    passage.write_text(example.passage)
    assert main(["lens", "--passage-file", str(passage), "--question", example.question, "--json", str(out),
                 "--model", tiny_model_dirs["bert"], "--gold", "1872"]) == 0
    return example, out


def test_the_lens_commands_json_loads_as_the_lens_the_api_computes(lens_file, tiny_model_dirs):
    example, out = lens_file
    loaded = rcqa.load_result(out)
    assert isinstance(loaded, AnswerLens) and isinstance(AnswerLens.load(out), AnswerLens)
    direct = answer_lens(load_model(tiny_model_dirs["bert"]), example)
    assert loaded.layers == direct.layers and loaded.answer.best.text == direct.answer.best.text
    assert loaded.readings.keys() == direct.readings.keys() == {"head"}  # the tiny model has no probes
    for ours, theirs in zip(loaded.readings["head"], direct.readings["head"]):
        assert (ours.span.text if ours.span else None) == (theirs.span.text if theirs.span else None)
        assert ours.probability == pytest.approx(theirs.probability)
    document = json.loads(out.read_text())  # the documented fields are all still there
    assert document["kind"] == "answer_lens" and {"final_answer", "readers", "probes", "layers"} <= document.keys()


def refusal(path) -> str:
    with pytest.raises(ValueError) as refused:
        rcqa.load_result(path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{path.name} is not a result rcqa can load: it seems to be ")
    assert "`rcqa lens --json`" in message and "`rcqa explain --json`" in message and message.endswith(".")
    return message


def test_files_that_hold_no_result_are_refused_in_one_sentence(lens_file, tmp_path):
    _, out = lens_file
    written = json.loads(out.read_text())
    old_lens = {key: value for key, value in written.items() if key not in ("kind", "best_spans")}  # before: to_dict
    files = {
        "old_lens.json": (json.dumps(old_lens), "an answer lens from before `rcqa lens --json` recorded its kind"),
        "old_interventions.json": (json.dumps({"explained_span": "x", "unchanged": {}, "layers": []}),
                                   "interventions from before `rcqa intervene --json`"),
        "faithfulness.json": (json.dumps({"methods": {}, "random": {}, "original": {}}),
                              "a methods comparison report (`rcqa faithfulness --json`), which is not a result"),
        "future.json": (json.dumps({"kind": "hologram"}), "unknown result kind 'hologram'"),
        "list.json": ("[1, 2]", "JSON that holds a list"),
        "damaged.json": (json.dumps({"kind": "answer_lens", "layers": []}),
                         "a result of kind 'answer_lens' whose fields are missing or damaged"),
        "other.json": (json.dumps({"hello": 1}), "JSON of another kind"),
        "notes.json": ("not json {", "no JSON at all"),
    }
    for name, (text, seems) in files.items():
        (tmp_path / name).write_text(text)
        assert seems in refusal(tmp_path / name), name
    np.savez(tmp_path / "arrays.npz", scores=np.zeros(3))
    assert "an .npz file that the result cache did not write" in refusal(tmp_path / "arrays.npz")
    (tmp_path / "text.npz").write_text("no zip")
    assert "an .npz file" in refusal(tmp_path / "text.npz")
    with pytest.raises(ValueError, match="an answer lens from before"):
        AnswerLens.load(tmp_path / "old_lens.json")
    with pytest.raises(FileNotFoundError):  # a missing file is not a file of another kind
        rcqa.load_result(tmp_path / "missing.json")


def test_the_intervene_commands_json_loads_back(tiny_model_dirs, tmp_path):
    from rcqa.lens.interventions import Interventions

    example = gallery_example("comet-who")
    passage, out = tmp_path / "passage.txt", tmp_path / "interventions.json"
    passage.write_text(example.passage)
    assert main(["intervene", "--passage-file", str(passage), "--question", example.question, "--json", str(out),
                 "--model", tiny_model_dirs["bert"], "--k", "2", "--draws", "3", "--cache-dir",
                 str(tmp_path / "cache")]) == 0
    document = json.loads(out.read_text())
    loaded = rcqa.load_result(out)
    assert isinstance(loaded, Interventions) and document["kind"] == "interventions"
    assert loaded.explained_span == document["explained_span"] and loaded.settings.k == 2
    assert [layer.label for layer in loaded.layers] == [layer["label"] for layer in document["layers"]]
    assert [layer.topk.span_probability for layer in loaded.layers] == [
        layer["topk"]["span_probability"] for layer in document["layers"]]
