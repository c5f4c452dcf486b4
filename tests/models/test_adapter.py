"""Every `*ForQuestionAnswering` family explains correctly through its adapter (issue 30): tiny random checkpoints
of each, built offline (tests/helpers/families.py), answered, explained one window and the whole passage, with the right
layers and completeness ≤ 1 % at every layer; the fast stack equal to the general path where it is used."""
import dataclasses
import json
import os
import re
import time
from pathlib import Path

import pytest
import torch

from rcqa.attribution.explanation import explain
from rcqa.attribution.window import window_inputs
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.stack import LayerStack
from rcqa.figures import model_facts
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.qa import InputError, answer, encode
from tests.helpers.families import BY_NAME, FAMILIES, build_family

TOLERANCE = 0.01
# what each family is marked: the representative set runs by default, the rest with -m slow
PARAMS = [pytest.param(f.name, marks=() if f.default else pytest.mark.slow, id=f.name) for f in FAMILIES]
DOCS_TABLE = (Path(__file__).parents[2] / "docs" / "models.md").read_text()
TABLE = os.environ.get("RCQA_FAMILY_TABLE")  # where test_every_family_explains appends its row (docs/models.md)


def first_window_stack(qa_model, example) -> LayerStack:
    inputs = window_inputs(encode(qa_model, example.question, example.passage), 0)
    return LayerStack(qa_model.model, {k: v.to(qa_model.device) for k, v in inputs.items()})


@pytest.mark.parametrize("name", PARAMS)
def test_every_family_explains(family_dir, name):
    family = BY_NAME[name]
    qa_model = load_model(family_dir(name))
    started = time.perf_counter()
    example = gallery_example("canal-long")  # more than one window
    found = answer(qa_model, example.passage, example.question)
    assert found.best is not None and example.passage[found.best.start_char:found.best.end_char] == found.best.text
    one = explain(qa_model, gallery_example("comet-who"), ExplainSettings())
    whole = explain(qa_model, example, ExplainSettings(windows="all"))
    layers = family.layers + 1
    worst = 0.0
    for result in (one, whole):
        assert len(result.layers) == layers and result.layers[0] == "embeddings"
        assert sorted({c.layer for c in result.completeness}) == list(range(layers))
        errors = [c.relative_error for c in result.completeness]
        assert max(errors) <= TOLERANCE, (name, errors)
        worst = max(worst, *errors)
    adapter = qa_model.adapter
    row = re.search(rf"^\| {re.escape(name)} \| (\w+) \| (\d+) \|", DOCS_TABLE, re.MULTILINE)
    assert row and row.groups() == (adapter.path, str(layers)), "docs/models.md's row is not what the test finds"
    if family.decoder:  # an encoder-decoder, Funnel: the encoder's blocks, then the decoder's, labelled so
        encoder = family.layers - family.decoder
        assert one.layers[1:] == ([f"encoder block {i}" for i in range(encoder)]
                                  + [f"decoder block {i}" for i in range(family.decoder)])
    if TABLE:
        with open(TABLE, "a") as table:
            table.write(json.dumps({"family": name, "path": adapter.path, "layers": layers, "worst": worst,
                                    "seconds": round(time.perf_counter() - started, 1),
                                    "null": qa_model.null_token is not None}) + "\n")



@pytest.mark.parametrize("name", ["BART", "mBART"])
def test_an_encoder_the_decoder_hardly_reads_still_explains_within_the_tolerance(tmp_path, name):
    """At BART's own initialisation (init_std 0.02, not the table's 0.2) a random decoder all but ignores the
    encoder: the encoder's layers move F (near −10) by about 1e-5, a few of float32's spacings there. Completeness
    still holds to 1 % at every layer (issue 40, item 9: in float32 F was 8.8 % off on BART, 1.1 % on mBART)."""
    family = BY_NAME[name]
    folder = build_family(dataclasses.replace(family, config={**family.config, "init_std": 0.02}), tmp_path)
    result = explain(load_model(str(folder)), gallery_example("comet-who"), ExplainSettings())
    encoder = [c for c in result.completeness if c.layer <= family.layers - family.decoder]
    assert max(abs(c.delta) for c in encoder) < 1e-4  # the case in point: F hardly depends on the encoder
    assert max(c.relative_error for c in result.completeness) <= TOLERANCE

FAST = [f.name for f in FAMILIES if f.model_type in
        {"bert", "roberta", "xlm-roberta", "deberta-v2", "electra", "distilbert", "albert", "mpnet", "modernbert"}]


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if BY_NAME[n].default else pytest.mark.slow)
                                  for n in FAST + ["Megatron-BERT", "XLM-R-XL", "RoBERTa-PreLayerNorm", "Llama",
                                                   "Mistral", "Qwen2", "DeBERTa", "CamemBERT", "ConvBERT",
                                                   "Data2Vec-text", "ERNIE", "I-BERT", "RemBERT", "RoFormer",
                                                   "MobileBERT"]])
def test_the_fast_stack_equals_the_models_own_forward_at_every_layer(family_dir, name):
    """The families on the fast path: from every layer, on states the model never made (the input's, scaled and
    shifted at random), the prefix-cached stack gives the logits of the model's own forward with that layer
    replaced, to 1e-6."""
    qa_model = load_model(family_dir(name))
    stack = first_window_stack(qa_model, gallery_example("comet-who"))
    assert stack.fast, qa_model.adapter.why
    generator = torch.Generator().manual_seed(0)
    for layer in range(stack.num_layers + 1):
        states = stack.hidden[layer] * (1 + torch.rand((3, 1, 1), generator=generator)) + torch.randn(
            (3, 1, stack.hidden[layer].shape[-1]), generator=generator)
        with torch.no_grad():
            fast = torch.cat(stack._run_suffix(layer, states))
            general = torch.cat(stack._run_model(layer, states))
        assert (fast - general).abs().max() <= 1e-6 * max(1.0, float(general.abs().max())), (name, layer)


def test_the_general_path_at_the_top_layer_is_the_models_forward_and_leaves_the_model_as_it_was(family_dir):
    """On BART (the general path) the logits from the last layer's own states are the model's own; the shared
    model keeps its modules and no hooks."""
    qa_model = load_model(family_dir("BART"))
    before = [(name, id(module)) for name, module in qa_model.model.named_modules()]
    stack = first_window_stack(qa_model, gallery_example("comet-who"))
    assert not stack.fast
    with torch.no_grad():
        start, end = stack.run_from(stack.num_layers, stack.hidden[-1])
    assert torch.allclose(start, stack.start_logits, atol=1e-5) and torch.allclose(end, stack.end_logits, atol=1e-5)
    assert [(name, id(module)) for name, module in qa_model.model.named_modules()] == before
    facts = dict(zip(*model_facts(qa_model).T.values))
    assert "model.encoder.layers (2) then model.decoder.layers (2)" in facts["layer adapter"]
    assert "the general path" in facts["layer adapter"] and facts["layers analysed"].startswith("5: embeddings")
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in qa_model.model.modules())


def test_a_pre_ln_family_applies_its_final_norm(family_dir):
    """Megatron-BERT's encoder ends with a norm (bert.encoder.ln) the blocks do not apply: the adapter finds it as
    what runs after the last block, and the head reads its output."""
    qa_model = load_model(family_dir("Megatron-BERT"))
    assert [type(m).__name__ for m in qa_model.adapter.final] == ["LayerNorm"]
    assert qa_model.adapter.final[0] is qa_model.model.bert.encoder.ln


def test_a_decoder_only_model_refuses_no_answer_in_one_sentence(family_dir):
    qa_model = load_model(family_dir("Llama"))
    assert qa_model.null_token is None
    example = gallery_example("comet-who")
    for run in (lambda: explain(qa_model, example, ExplainSettings(targets=("null",))),
                lambda: explain(qa_model, example, ExplainSettings(contrast="null")),
                lambda: answer(qa_model, example.passage, example.question, allow_null=True)):
        with pytest.raises(InputError, match="^LlamaForQuestionAnswering has no \\[CLS\\]-style first token"):
            run()
    assert load_model(family_dir("BERT")).null_token == 0


def test_the_adapter_found_from_a_batch_of_windows_is_the_one_from_one_window(family_dir):
    """The answer lens's first stack holds a batch of windows: the adapter it finds is the one window's."""
    from transformers import AutoModelForQuestionAnswering

    qa_model = load_model(family_dir("BERT"))
    windows = encode(qa_model, gallery_example("canal-long").question, gallery_example("canal-long").passage)
    assert len(windows) > 1
    fresh = AutoModelForQuestionAnswering.from_pretrained(family_dir("BERT")).eval()  # no adapter found yet
    stack = LayerStack(fresh, dict(windows.inputs))
    assert stack.adapter.axes == (0, 1, 2) and stack.fast and stack.adapter.labels == qa_model.adapter.labels
    assert stack.hidden[1].shape[:2] == windows.inputs["input_ids"].shape


ENCODER_DECODER_LABELS = ["embeddings", "encoder block 0", "encoder block 1", "decoder block 0", "decoder block 1"]


def test_the_lens_probes_and_knock_outs_name_an_encoder_decoders_layers_by_its_adapter(family_dir):
    """BART: the lens, the probes' report and the knock-outs label its layers encoder blocks, then decoder blocks."""
    from rcqa.gallery import GALLERY
    from rcqa.lens import read_layers
    from rcqa.lens.interventions import intervene
    from rcqa.lens.probes import ProbeSettings, train_probes

    qa_model = load_model(family_dir("BART"))
    example = gallery_example("comet-who")
    assert read_layers(qa_model, example).layers == ENCODER_DECODER_LABELS
    probes = train_probes(qa_model, list(GALLERY), ProbeSettings(examples=2, max_iterations=2))
    assert probes.report["layers"] == ENCODER_DECODER_LABELS and probes.weight.shape[0] == 5
    result = explain(qa_model, example, ExplainSettings(steps=4, tolerance=None))
    found = intervene(qa_model, result, k=1, draws=1)
    assert [layer["label"] for layer in found.to_dict()["layers"]] == ENCODER_DECODER_LABELS


def test_skipping_an_encoder_decoders_block_equals_the_model_without_it(family_dir):
    """BART's blocks each skipped in turn, against a copy of the model without that block, read by hand: the first
    decoder block is called with the decoder's embeddings, not the encoder's last states, so skipping it passes
    those on."""
    import copy

    from rcqa.lens.interventions import intervene
    from tests.helpers.lens_reference import answer_probabilities, one_window

    qa_model = load_model(family_dir("BART"))
    example = gallery_example("comet-who")
    result = explain(qa_model, example, ExplainSettings(steps=4, tolerance=None))
    found = intervene(qa_model, result, k=1, draws=1)
    inputs, offsets, passage_tokens = one_window(qa_model, example)
    best = result.answer.best
    for layer, (part, block) in enumerate([("encoder", 0), ("encoder", 1), ("decoder", 0), ("decoder", 1)], 1):
        model = copy.deepcopy(qa_model.model)
        blocks = getattr(model.model, part).layers
        getattr(model.model, part).layers = torch.nn.ModuleList([b for i, b in enumerate(blocks) if i != block])
        with torch.no_grad():
            output = model(**inputs, use_cache=False)
        answers = answer_probabilities(output.start_logits[0].double().numpy(), output.end_logits[0].double().numpy(),
                                       offsets, passage_tokens, example.passage)
        skipped = found.layers[layer].skip_block
        assert skipped.span_probability == pytest.approx(answers.get((best.start_char, best.end_char), 0.0),
                                                         rel=1e-4, abs=1e-9), (part, block)
