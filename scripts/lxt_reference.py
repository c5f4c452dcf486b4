"""LXT 2.1's AttnLRP on the default model's weights: the reference tests/attribution/test_attnlrp_lxt.py holds
rcqa's AttnLRP to (issue 40). Run from the checkout's root, in rcqa's environment:

    python -m scripts.lxt_reference [--venv /work/.lxt-venv] [--out tests/data/attnlrp_lxt.npz]

LXT patches BERT only for transformers < 4.55 (a frozen copy of an old modeling_bert.py) and patches classes for
the whole process, so it runs in a venv of its own, built on first use: torch 2.13.0 (the local CPU wheel),
transformers 4.52.4 and lxt 2.1 without its dependencies (accelerate, bitsandbytes, open_clip_torch, zennit: none
is needed for BERT). This process makes each question's window and predicted span with rcqa; the venv's process
(`--inner`, which imports neither rcqa nor transformers 5) runs LXT's patched BertForQuestionAnswering, eager
attention, float32, on the same inputs and returns per layer H_l ⊙ ∂̃F/∂H_l, F = start logit + end logit of the span
(rcqa's span_logits): layer 0 is the embeddings' output (after their LayerNorm), layers 1..L the blocks' outputs.
The fixture keeps per question the inputs, the span, LXT's F, the relevance summed over the hidden dims per token,
and for one question the whole tensor; with the model's fingerprint and this command."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

VENV = Path("/work/.lxt-venv")
OUT = Path("tests/data/attnlrp_lxt.npz")
PACKAGES = ("torch==2.13.0", "transformers==4.52.4")
WITHOUT_DEPENDENCIES = ("lxt==2.1",)
QUESTIONS = ("choir-how-many", "comet-who", "bakery-where", "lighthouse-unanswerable", "canal-long")
WHOLE = "choir-how-many"  # the shortest window: its tokens × dims tensor stays under 1 MB
INPUTS = ("input_ids", "token_type_ids", "attention_mask")


def build_venv(venv: Path) -> Path:
    """The venv's python, the venv made and filled first where it has not been."""
    python = venv / "bin" / "python"
    marker = venv / "rcqa-lxt-reference.json"
    wanted = json.dumps([PACKAGES, WITHOUT_DEPENDENCIES])
    if marker.exists() and marker.read_text() == wanted:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", *WITHOUT_DEPENDENCIES], check=True)
    marker.write_text(wanted)
    return python


def stub_torchvision() -> None:
    """lxt imports torchvision's vision_transformer for its ViT table only; torchvision's wheel on the index is a CUDA
    build, so a stand-in module takes its place (its nn is torch's, which is all the table reads)."""
    import types

    import torch

    names = ("torchvision", "torchvision.models", "torchvision.models.vision_transformer")
    modules = [types.ModuleType(name) for name in names]
    modules[2].nn = torch.nn
    modules[0].models, modules[1].vision_transformer = modules[1], modules[2]
    sys.modules.update(zip(names, modules))


def lxt_relevance(model_dir: str, request: Path, result: Path) -> None:
    """In the venv: LXT's relevance at every layer for each request's inputs and span."""
    import importlib.metadata

    import torch
    from transformers.models.bert import modeling_bert  # first: transformers would take the stand-in for torchvision
    stub_torchvision()
    from lxt.efficient import monkey_patch

    monkey_patch(modeling_bert)
    if modeling_bert.BertForQuestionAnswering.__module__ != "lxt.efficient.models.bert":
        raise RuntimeError("lxt did not patch transformers' BERT (it does only below transformers 4.55)")
    model = modeling_bert.BertForQuestionAnswering.from_pretrained(
        model_dir, torch_dtype=torch.float32, attn_implementation="eager").eval()
    asked = np.load(request)
    out = {f"version_{name}": np.array(importlib.metadata.version(name)) for name in ("lxt", "transformers", "torch")}
    for question in asked["questions"]:
        inputs = {key: torch.from_numpy(asked[f"{question}__{key}"]) for key in INPUTS}
        start, end = asked[f"{question}__span"]
        output = model(**inputs, output_hidden_states=True)
        value = output.start_logits[0, start] + output.end_logits[0, end]
        gradients = torch.autograd.grad(value, output.hidden_states)
        relevance = torch.stack([(h * g)[0] for h, g in zip(output.hidden_states, gradients)]).detach()
        out[f"{question}__value"] = np.array(float(value.detach()), dtype=np.float64)
        out[f"{question}__relevance"] = relevance.numpy()
    np.savez(result, **out)


def requests(questions: tuple[str, ...]) -> tuple[dict[str, np.ndarray], str, str]:
    """With rcqa: each question's window inputs and predicted span; the model's folder and fingerprint."""
    from rcqa.attribution.window import explained_window
    from rcqa.gallery import gallery_example
    from rcqa.model import load_model
    from rcqa.resources import EMBEDDED_MODEL_DIRS

    qa_model = load_model("default")
    arrays: dict[str, np.ndarray] = {"questions": np.array(questions)}
    for question in questions:
        window = explained_window(qa_model, gallery_example(question))
        arrays.update({f"{question}__{key}": window.inputs[key].numpy() for key in INPUTS})
        arrays[f"{question}__span"] = np.array([window.start_token, window.end_token])
    return arrays, str(EMBEDDED_MODEL_DIRS["default"]), qa_model.fingerprint


def fixture(asked: dict[str, np.ndarray], found: dict[str, np.ndarray], fingerprint: str, command: str
            ) -> dict[str, np.ndarray]:
    """The inputs and spans, LXT's F and per-token relevance (layers × tokens), WHOLE's layers × tokens × dims."""
    arrays = {**asked, "fingerprint": np.array(fingerprint), "command": np.array(command), "whole": np.array(WHOLE)}
    arrays.update({key: value for key, value in found.items() if key.startswith("version_")})
    for question in asked["questions"]:
        relevance = found[f"{question}__relevance"]
        arrays[f"{question}__value"] = found[f"{question}__value"]
        arrays[f"{question}__token_relevance"] = relevance.astype(np.float64).sum(-1).astype(np.float32)
        if question == WHOLE:
            arrays[f"{question}__relevance"] = relevance.astype(np.float32)
    return arrays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=VENV)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--inner", nargs=3, metavar=("MODEL_DIR", "REQUEST", "RESULT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        lxt_relevance(args.inner[0], Path(args.inner[1]), Path(args.inner[2]))
        return
    python = build_venv(args.venv)
    asked, model_dir, fingerprint = requests(QUESTIONS)
    with tempfile.TemporaryDirectory() as folder:
        request, result = Path(folder, "request.npz"), Path(folder, "result.npz")
        np.savez(request, **asked)
        subprocess.run([str(python), __file__, "--inner", model_dir, str(request), str(result)], check=True)
        found = dict(np.load(result))
    command = "python -m scripts.lxt_reference " + " ".join(sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **fixture(asked, found, fingerprint, command.strip()))
    print(f"{args.out}: {len(asked['questions'])} questions, fingerprint {fingerprint}, "
          f"{args.out.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
