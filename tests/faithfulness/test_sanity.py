"""Sanity checks (Adebayo et al.): the randomisation touches exactly the parts it names and never the shared model,
the rank numbers by hand, and the verdicts on methods whose dependence on the weights is known."""
import copy
import json

import numpy as np
import pytest
import torch

from rcqa.attribution.cost import MULTIPLY_ADDS_PER_TOKEN_BLOCK, SECONDS_PER_MULTIPLY_ADD, SPEED_ENV
from rcqa.attribution.methods import METHODS, AttributionMethod
from rcqa.attribution.settings import ExplainSettings
from rcqa.cli import main
from rcqa.faithfulness.document import FaithfulnessReport
from rcqa.faithfulness.entry import Entry
from rcqa.faithfulness.metrics import rank_correlation
from rcqa.faithfulness.sanity import FAIL_AT, model_parts, randomise, sanity_checks, sanity_seconds, top_k_overlap
from rcqa.gallery import gallery_example

METHODS_CHECKED = ("gradient", "gradient_x_input", "attnlrp", "attention_rollout")
SEEN: list = []  # what the fake method was shown: (the case's model, its target positions, its window)


class TokenOrder(AttributionMethod):
    """Scores that never read the model: each token its position."""

    name = "token_order"
    label = "Token order"
    description = "each token's position"

    def attribute(self, case):
        SEEN.append((case.qa_model.model, case.target_positions, case.window))
        return {"magnitude": np.arange(case.length, dtype=float)}


@pytest.fixture(scope="module")
def checked(tiny_bert):
    """The checks on the tiny BERT, with the shared model's weights and hooks as they were before."""
    before = {name: tensor.clone() for name, tensor in tiny_bert.model.state_dict().items()}
    before["attention"] = tiny_bert.model.config._attn_implementation
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(METHODS, TokenOrder.name, TokenOrder())
        SEEN.clear()
        found = sanity_checks(tiny_bert, gallery_example("comet-who"), [*METHODS_CHECKED, TokenOrder.name])
    return found, before, list(SEEN)


def test_each_part_randomised_changes_its_own_weights_and_no_other(tiny_bert):
    parts = model_parts(tiny_bert)
    assert [p.label for p in parts] == ["QA head", "block 2", "block 1", "block 0", "embeddings"]
    trained = tiny_bert.model.state_dict()
    for index, part in enumerate(parts):
        private = copy.deepcopy(tiny_bert.model)
        state = torch.random.get_rng_state()
        randomise(private, part, seed=index)
        assert torch.equal(torch.random.get_rng_state(), state)  # nobody else's draws move
        for name, tensor in private.state_dict().items():
            inside = any(name.startswith(module + ".") for module in part.modules)
            if inside and tensor.dim() == 2:  # every weight matrix drawn anew (biases and norms: 0 and 1 as before)
                assert not torch.equal(tensor, trained[name]), name
                assert tensor.std().item() == pytest.approx(tiny_bert.config.initializer_range, rel=0.3)
            elif not inside:
                assert torch.equal(tensor, trained[name]), name
    again = [copy.deepcopy(tiny_bert.model) for _ in range(2)]
    for model in again:
        randomise(model, parts[1], seed=7)
    assert all(torch.equal(a, b) for a, b in zip(again[0].state_dict().values(), again[1].state_dict().values()))


def test_the_shared_model_keeps_its_weights_and_has_no_hooks(checked, tiny_bert):
    _, before, seen = checked
    after = tiny_bert.model.state_dict()
    assert before.pop("attention") == tiny_bert.model.config._attn_implementation
    assert before.keys() == after.keys() and all(torch.equal(before[n], after[n]) for n in before)
    for module in tiny_bert.model.modules():
        assert not (module._forward_hooks or module._forward_pre_hooks or module._backward_hooks), module
    # every randomised model was a private one: the trained model explained once, each of the 2 × 5 others once
    models = [model for model, _, _ in seen]
    assert sum(model is tiny_bert.model for model in models) == 1 and len(models) == 1 + 2 * 5


def test_every_randomised_model_explains_the_trained_models_span_in_its_window(checked):
    _, _, seen = checked
    positions, windows = {p for _, p, _ in seen}, {id(w) for _, _, w in seen}
    assert len(positions) == 1 and len(windows) == 1


def test_spearman_and_top_k_overlap_by_hand():
    # ranks differ by d = (−1, 1, −1, 1, 0): ρ = 1 − 6 Σd² / (n (n² − 1)) = 1 − 24 / 120
    assert rank_correlation(np.array([1., 2, 3, 4, 5]), np.array([2., 1, 4, 3, 5])) == pytest.approx(0.8)
    assert rank_correlation(np.array([1., 2, 3]), np.zeros(3)) is None  # all equal: no ranking
    original, reversed_ = np.array([5., 4, 3, 2, 1]), np.array([1., 2, 3, 4, 5])
    assert top_k_overlap(original, reversed_, 2) == 0.0  # {0, 1} against {4, 3}
    assert top_k_overlap(original, reversed_, 3) == pytest.approx(1 / 3)  # {0, 1, 2} against {4, 3, 2}
    assert top_k_overlap(original, np.array([9., 0, 8, 0, 7]), 3) == pytest.approx(2 / 3)


def test_methods_that_never_read_the_weights_fail_and_the_gradient_passes(checked):
    found, _, _ = checked
    step = found.verdict_step
    assert found.parts[step].label == "block 0"  # the head and every block random, the embeddings as trained
    for entry in (Entry("random", "random"), Entry("token_order", "magnitude")):
        assert found.entries[entry].spearman["cascade"] == [pytest.approx(1.0)] * 5
        assert found.fails(entry) and "fails the sanity check" in found.verdict(entry)
    by_gradient = Entry("gradient", "magnitude")
    gradient = found.entries[by_gradient]
    assert gradient.spearman["cascade"][step] < FAIL_AT and not found.fails(by_gradient)
    assert "passes the sanity check" in found.verdict(by_gradient)
    assert f"ρ = {gradient.spearman['cascade'][step]:.2f}" in found.verdict(by_gradient)
    # the first step of both series is the same model: the QA head alone randomised
    for entry in found.entries.values():
        assert entry.spearman["cascade"][0] == entry.spearman["independent"][0]


def test_the_cost_is_each_models_block_passes_by_hand(tiny_bert, monkeypatch):
    monkeypatch.delenv(SPEED_ENV, raising=False)
    # 11 models (trained, 2 × 5 parts) × (a recording forward 1/3 + the shared gradient pass 1) × 3 blocks
    work = 11 * (1 / 3 + 1) * 3 * 100 * MULTIPLY_ADDS_PER_TOKEN_BLOCK * 32 ** 2
    assert sanity_seconds(tiny_bert, ExplainSettings(), ["gradient", "gradient_x_input"], 100) == pytest.approx(
        work * SECONDS_PER_MULTIPLY_ADD)
    with_ig = sanity_seconds(tiny_bert, ExplainSettings(), ["integrated_gradients"], 100)
    assert with_ig > sanity_seconds(tiny_bert, ExplainSettings(), ["gradient"], 100) * ExplainSettings().steps / 2


def test_faithfulness_sanity_adds_its_section_to_the_json(tiny_model_dirs, tmp_path, capsys):
    example = gallery_example("comet-who")
    (tmp_path / "passage.txt").write_text(example.passage)
    assert main(["faithfulness", "--passage-file", str(tmp_path / "passage.txt"), "--question", example.question,
                 "--json", str(tmp_path / "out.json"), "--k", "2", "--draws", "2", "--methods", "gradient",
                 "--sanity", "--model", tiny_model_dirs["bert"]]) == 0
    document = json.loads((tmp_path / "out.json").read_text())
    sanity, printed = document["sanity"], capsys.readouterr().err
    assert sanity["passage_words"] == document["passage_words"] and sanity["k"] == 5 and sanity["fail_at"] == FAIL_AT
    assert [p["label"] for p in sanity["parts"]][sanity["verdict_step"]] == "block 0"
    assert list(sanity["methods"]) == ["gradient:magnitude", "random"]
    for method in sanity["methods"].values():
        for series in ("cascade", "independent"):
            assert len(method[series]["spearman"]) == len(method[series]["top_k_overlap"]) == 5
        assert method["verdict"] in printed
    assert sanity["methods"]["random"]["fails"] and not sanity["methods"]["gradient:magnitude"]["fails"]
    report = FaithfulnessReport.load(tmp_path / "out.json")  # the section rides along, last
    assert report.sanity == sanity and report.to_json() == (tmp_path / "out.json").read_text(encoding="utf-8")


def test_the_api_checks_plain_strings_with_the_presets_settings(tiny_bert):
    import rcqa

    example = gallery_example("comet-who")
    found = rcqa.sanity_checks(tiny_bert, example.passage, example.question, ["gradient"], k=3, seed=2)
    direct = sanity_checks(tiny_bert, example, ["gradient"], ExplainSettings(), k=3, seed=2)
    assert isinstance(found, rcqa.SanityCheck) and found.k == 3 and list(found.entries) == [
        Entry("gradient", "magnitude"), Entry("random", "random")]
    assert all(found.entries[name] == direct.entries[name] for name in direct.entries)
