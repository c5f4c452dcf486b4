"""Linear start/end probes, one per layer, trained on SQuAD with the model frozen; stored beside the model.

A probe reads a layer's states H_l as the QA head reads the last one: a start logit and an end logit per token,
each a dot product with one vector. It is trained as the head is (cross-entropy of the gold start and end tokens
under a softmax over the window), here over the passage's tokens only, the only tokens an answer is decoded from.
There is no bias: a constant added to every token's logit cancels in the softmax over the window.

Every layer's problem is convex and small (2 × hidden parameters), so it is solved in one batch by L-BFGS from
zero, which makes training reproducible: the same model, examples and seed give the same probes.

Probes are keyed by the model's fingerprint and refused for any other model. The embedded default model keeps
its probes in its own folder (rcqa/default_model/probes.safetensors, with probes.json: how they were trained and
their dev scores); another model's go to the cache (RCQA_CACHE_DIR/probes/<fingerprint>/).
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from rcqa.attribution.stack import LayerStack
from rcqa.attribution.window import window_inputs
from rcqa.model import DEFAULT_MODEL, QAModel
from rcqa.qa import char_span_to_tokens, encode
from rcqa.resources import EMBEDDED_MODEL_DIRS, cache_dir
from rcqa.types import Example

WEIGHTS_FILE, REPORT_FILE = "probes.safetensors", "probes.json"
FORMAT = "1"


class ProbesUnavailable(LookupError):
    """No probes fit this model: none were trained for it, or those found belong to another model (the message
    says which and how to train them)."""


@dataclass(frozen=True)
class ProbeSettings:
    """Everything that decides the probes a training run gives."""

    examples: int = 3000  # SQuAD train questions, drawn with the seed
    seed: int = 0
    l2: float = 0.01  # weight on the squared norm of each probe vector, beside the mean cross-entropy: of 1e-4 … 0.1
    # on the default model (1,500 training, 300 held-out windows), within 0.6 % of the best held-out loss at every layer
    max_iterations: int = 300  # L-BFGS iterations per layer


@dataclass(frozen=True)
class Probes:
    """Per layer a start and an end vector: weight is layers × 2 × hidden (layer 0 reads the embeddings)."""

    weight: torch.Tensor
    fingerprint: str
    report: dict = field(default_factory=dict)  # how they were trained and how they score (probes.json)

    @property
    def num_layers(self) -> int:
        return self.weight.shape[0]

    def logits(self, layer: int, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end logits (… × tokens) of states hidden (… × tokens × dim) at one layer."""
        start, end = torch.einsum("...d,sd->s...", hidden, self.weight[layer].to(hidden)).unbind(0)
        return start, end

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / WEIGHTS_FILE
        save_file({"weight": self.weight.contiguous()}, str(path),
                  metadata={"fingerprint": self.fingerprint, "format": FORMAT})
        (folder / REPORT_FILE).write_text(json.dumps(self.report, indent=2) + "\n")
        return path

    @classmethod
    def load(cls, folder: Path) -> Probes:
        from safetensors import safe_open

        path = folder / WEIGHTS_FILE
        with safe_open(str(path), framework="pt") as stored:
            metadata = stored.metadata() or {}
        report = folder / REPORT_FILE
        return cls(weight=load_file(str(path))["weight"], fingerprint=metadata.get("fingerprint", ""),
                   report=json.loads(report.read_text()) if report.is_file() else {})


def home(qa_model: QAModel) -> Path:
    """Where `python -m rcqa probes` writes a model's probes: an embedded model's own folder, else the cache."""
    return EMBEDDED_MODEL_DIRS.get(qa_model.name) or cache_dir() / "probes" / qa_model.fingerprint


def find_probes(qa_model: QAModel) -> Probes:
    """The probes trained for this model: from its own folder (an embedded model, or a local model folder that
    ships them), else from the cache. ProbesUnavailable, saying why, when none fit."""
    folders = [home(qa_model)]
    if Path(qa_model.name).is_dir():
        folders.insert(0, Path(qa_model.name))
    problems = []
    for folder in dict.fromkeys(folders):
        if not (folder / WEIGHTS_FILE).is_file():
            continue
        probes = Probes.load(folder)
        if probes.fingerprint == qa_model.fingerprint and probes.num_layers == qa_model.num_layers + 1:
            return probes
        problems.append(f"{folder / WEIGHTS_FILE} belongs to model {probes.fingerprint or 'unknown'}, not to "
                        f"this one ({qa_model.fingerprint}), so it is not used")
    problems.append(f"train probes with `python -m rcqa probes --model {qa_model.name}`")
    raise ProbesUnavailable(f"no probes for {qa_model.name}: " + "; ".join(problems))


# --- training --------------------------------------------------------------------------------------------

@dataclass
class TokenStates:
    """Every layer's states of the passage tokens of many windows, concatenated, with each window's gold tokens."""

    layers: list[torch.Tensor]  # per layer: tokens × dim (float16 to halve the memory: about 3 GB for the
    # default model at 3,000 windows)
    window: torch.Tensor  # per token: the window it belongs to
    starts: torch.Tensor  # per window: the flat index of its gold start token
    ends: torch.Tensor


def sample_questions(examples: list[Example], count: int, seed: int) -> list[Example]:
    """count answerable questions drawn with the seed (spread over the whole file, not its first articles)."""
    answerable = [e for e in examples if e.answers and not e.is_impossible and e.answers[0].start_char >= 0]
    return random.Random(seed).sample(answerable, min(count, len(answerable)))


def collect_states(qa_model: QAModel, examples: Iterable[Example],
                   progress: Callable[[Iterable], Iterable] = iter) -> TokenStates:
    """Run the frozen model on the window of each question that holds its first gold answer (as the model would
    read it), keeping every layer's states of the window's passage tokens."""
    layers: list[list[torch.Tensor]] = []
    window_of, starts, ends = [], [], []
    seen = 0
    for example in progress(examples):
        gold = example.answers[0]
        windows = encode(qa_model, example.question, example.passage)
        found = char_span_to_tokens(windows, gold.start_char, gold.start_char + len(gold.text))
        if found is None:
            continue
        window, start, end = found
        inputs = window_inputs(windows, window)
        passage = torch.nonzero(windows.passage_mask[window, :inputs["input_ids"].shape[1]]).flatten()
        stack = LayerStack(qa_model.model, {k: v.to(qa_model.device) for k, v in inputs.items()})
        if not layers:
            layers = [[] for _ in stack.hidden]
        for kept, hidden in zip(layers, stack.hidden):
            kept.append(hidden[0, passage].to("cpu", torch.float16))
        starts.append(seen + int((passage < start).sum()))
        ends.append(seen + int((passage < end).sum()))
        window_of.append(torch.full((len(passage),), len(starts) - 1))
        seen += len(passage)
    if not starts:
        raise ValueError("none of the questions has its gold answer inside a window the model reads")
    joined = []
    for layer, kept in enumerate(layers):  # one layer at a time, so that the pieces and the whole never all coexist
        joined.append(torch.cat(kept))
        layers[layer] = []
    return TokenStates(joined, torch.cat(window_of), torch.tensor(starts), torch.tensor(ends))


def fit_probe(states: torch.Tensor, window: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor,
              l2: float = ProbeSettings.l2, max_iterations: int = ProbeSettings.max_iterations,
              ) -> tuple[torch.Tensor, float]:
    """(2 × dim start and end vectors, final loss) minimising the mean over windows of the cross-entropy of the gold
    start and end tokens under a softmax over each window's tokens, plus l2 × the squared norm of the vectors.

    states: tokens × dim; window: per token, the index of its window; starts, ends: per window, flat indices of
    its gold tokens."""
    states = states.float()
    weight = torch.zeros(2, states.shape[1], requires_grad=True)
    optimiser = torch.optim.LBFGS([weight], lr=1, max_iter=max_iterations, history_size=20,
                                  tolerance_grad=1e-7, tolerance_change=1e-10, line_search_fn="strong_wolfe")

    def objective() -> torch.Tensor:
        logits = states @ weight.T  # tokens × 2
        gold = torch.stack([logits[starts, 0], logits[ends, 1]], dim=1)  # windows × 2
        return (_window_logsumexp(logits, window, len(starts)) - gold).sum(1).mean() + l2 * weight.square().sum()

    def closure() -> torch.Tensor:
        optimiser.zero_grad()
        value = objective()
        value.backward()
        return value

    optimiser.step(closure)
    with torch.no_grad():
        return weight.detach(), float(objective())


def _window_logsumexp(logits: torch.Tensor, window: torch.Tensor, count: int) -> torch.Tensor:
    """count × columns: log Σ exp over each window's tokens (tokens × columns in, window index per token)."""
    index = window[:, None].expand_as(logits)
    peak = torch.full((count, logits.shape[1]), float("-inf")).scatter_reduce(0, index, logits.detach(), "amax")
    total = torch.zeros(count, logits.shape[1]).index_add(0, window, (logits - peak[window]).exp())
    return peak + total.log()


def train_probes(qa_model: QAModel, examples: list[Example], settings: ProbeSettings = ProbeSettings(),
                 progress: Callable[[Iterable], Iterable] = iter) -> Probes:
    """Probes for every layer of the frozen model, from settings.examples questions drawn from examples."""
    questions = sample_questions(examples, settings.examples, settings.seed)
    states = collect_states(qa_model, questions, progress)
    vectors, losses = [], []
    for layer_states in states.layers:
        vector, loss = fit_probe(layer_states, states.window, states.starts, states.ends, settings.l2,
                                 settings.max_iterations)
        vectors.append(vector)
        losses.append(round(loss, 4))
    report = {"model": qa_model.name, "fingerprint": qa_model.fingerprint,
              "layers": list(qa_model.adapter.labels),
              "training": {"questions": len(questions), "windows": len(states.starts),
                           "passage_tokens": len(states.window), **asdict(settings), "final_loss": losses}}
    return Probes(torch.stack(vectors), qa_model.fingerprint, report)
