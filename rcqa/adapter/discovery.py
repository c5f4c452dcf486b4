"""Finding a model's adapter: its blocks from its structure, then, from one recorded forward of a private copy, what
runs after them, its QA head, its axes and pooling, whether the fast prefix-cached stack may replay it (and why
not), and whether its first token reads the input. Found once per model object (adapter_of)."""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import cast

import torch

from rcqa.adapter.calls import Call, first, without_cache
from rcqa.adapter.copies import Recorder, with_replacements
from rcqa.adapter.model_adapter import ModelAdapter
from rcqa.adapter.structure import outside_blocks, block_lists


# Model types whose prefix-cached stack a test proves equal to the general path to 1e-6 (tests/models/test_adapter.py);
# any other family, or a checkpoint of these whose recorded forward is not a plain chain, takes the general path.
FAST_FAMILIES = frozenset({
    "albert", "bert", "camembert", "convbert", "data2vec-text", "deberta", "deberta-v2", "distilbert", "electra",
    "ernie", "ibert", "megatron-bert", "mobilebert", "modernbert", "mpnet", "rembert", "roberta",
    "roberta-prelayernorm", "roformer", "xlm-roberta", "xlm-roberta-xl", "llama", "mistral", "qwen2",
})


_adapters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def adapter_of(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> ModelAdapter:
    """The model's adapter, found once per model object with these inputs (one window of its own) as the probe."""
    with _lock:
        found = _adapters.get(model)
    if found is None:
        found = discover(model, inputs)
        with _lock:
            _adapters[model] = found
    return found


def _appender(calls: list[tuple[str, Call]], kind: str) -> Callable[[Call], None]:
    """Records a call into `calls`, labelled with its module's kind."""
    return lambda call: calls.append((kind, call))


def discover(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> ModelAdapter:
    """Find the blocks from the structure, then, from one recorded forward, what runs after them and whether the
    recorded calls chain (each block called with the one before's output) so that the fast stack replays them."""
    named = block_lists(model)
    lists = [blocks for _, blocks in named]
    outside = outside_blocks(model, lists)
    calls: list[tuple[str, Call]] = []
    recorders: dict[torch.nn.Module, torch.nn.Module] = {
        m: Recorder(m, _appender(calls, kind))
        for kind, modules in (("block", [b for l in lists for b in l]), ("other", outside)) for m in modules}
    private = with_replacements(model, recorders)
    with torch.no_grad():
        output = private(**without_cache(model, inputs))
    block_calls = [i for i, (kind, _) in enumerate(calls) if kind == "block"]
    if not block_calls:
        raise ValueError(f"{type(model).__name__}: its forward called none of its blocks")
    labels = ["embeddings"] + _block_labels(named, [call.module for kind, call in calls if kind == "block"])
    after = [call for kind, call in calls[block_calls[-1] + 1:]]
    head = after[-1].module if after and _is_span_head(after[-1].module) else None
    feeding = _feeding_head(after) if head is not None else []
    model_type = getattr(model.config, "model_type", "")
    why = _fast_or_why_not(model_type, calls, block_calls, feeding + after[-1:], head, output)
    return ModelAdapter(
        architecture=type(model).__name__, model_type=model_type, blocks=tuple(lists),
        block_names=tuple(name for name, _ in named), labels=tuple(labels),
        final=tuple(call.module for call in feeding), head=head,
        path="fast" if why is None else "general", why=why or "its prefix-cached stack is proven equal to its forward",
        first_token_reads_input=_first_token_reads_input(model, inputs, output),
        axes=_axes(calls[block_calls[0]][1].hidden, *inputs["input_ids"].shape), pool=_mean_pooling(model))


def _mean_pooling(model: torch.nn.Module) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """The model's own pooling of its tokens between blocks: Funnel's attention structure's pool_tensor, which reads
    only the config, in its default mode, a mean (whatever the config's pooling_type, the groups are the same);
    None for a model that has no such method."""
    structure = next((m for m in model.modules() if callable(getattr(m, "pool_tensor", None))), None)
    # a module's attribute reads as Tensor | Module; the line above found it callable: transformers' pooling method
    return None if structure is None else cast(Callable[[torch.Tensor], torch.Tensor], structure.pool_tensor)


def _axes(hidden: torch.Tensor, batch: int, tokens: int) -> tuple[int, int, int]:
    """Where a block's hidden states keep the batch, the tokens and the features: most models
    batch × tokens × dim, XLNet tokens × batch × dim, SqueezeBERT batch × dim × tokens; Longformer pads the tokens
    to its attention window."""
    fits = [axis for axis in (1, 0, 2) if hidden.shape[axis] == tokens]
    token_axis = (fits or [axis for axis in (1, 0, 2) if hidden.shape[axis] > tokens])[0]  # Longformer pads
    batch_axis = next(axis for axis in (0, 1, 2) if axis != token_axis and hidden.shape[axis] == batch)
    return batch_axis, token_axis, 3 - batch_axis - token_axis


def _block_labels(named: list[tuple[str, torch.nn.ModuleList]], called: list[torch.nn.Module]) -> list[str]:
    """One label per block call: "block i", or with more than one part (encoder, decoder) "encoder block i"."""
    def part(module: torch.nn.Module) -> str:
        name = next(name for name, blocks in named if any(b is module for b in blocks))
        path = [part for part in name.split(".") if not part.isdigit()]  # Funnel's encoder.blocks.0: the outer list
        return path[-2] if len(path) > 1 else path[0]  # a list at the model's top: its own name

    parts = [part(module) for module in called]
    several = len(set(parts)) > 1
    counts: dict[str, int] = {}
    labels = []
    for p in parts:
        labels.append(f"{p} block {counts.get(p, 0)}" if several else f"block {counts.get(p, 0)}")
        counts[p] = counts.get(p, 0) + 1
    return labels


def _feeding_head(after: list[Call]) -> list[Call]:
    """Of the calls after the last block (the QA head last), those whose output the head reads, in order: each
    one's output is the next one's input (a final norm, ModernBERT's prediction head). A module whose output goes
    elsewhere, as SqueezeBERT's pooler, which its QA head never reads, is not among them."""
    feeding: list[Call] = []
    wanted = after[-1].hidden
    for call in reversed(after[:-1]):
        if _same(call.hidden_out, wanted):
            feeding.insert(0, call)
            wanted = call.hidden
    return feeding


def _is_span_head(module: torch.nn.Module) -> bool:
    return isinstance(module, torch.nn.Linear) and module.out_features == 2


def _fast_or_why_not(model_type: str, calls: list[tuple[str, Call]], block_calls: list[int],
                     after: list[Call], head: torch.nn.Module | None, output) -> str | None:
    """None where the prefix-cached stack reproduces the model, else the sentence saying why it may not."""
    if model_type not in FAST_FAMILIES:
        return "no test has proven its prefix-cached stack equal to its forward"
    if head is None:
        return "its QA head is not one linear layer over the last hidden states"
    chain = [calls[i][1] for i in block_calls] + after
    if any(not _same(b.hidden, a.hidden_out) for a, b in zip(chain, chain[1:])):
        return "something other than its blocks and final modules runs between its layers"
    start, end = first(after[-1].output).split(1, dim=-1)
    if not (_same(start.squeeze(-1), output.start_logits) and _same(end.squeeze(-1), output.end_logits)):
        return "its logits are not its QA head's output as it stands"
    return None


def _same(a, b) -> bool:
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)


def _first_token_reads_input(model: torch.nn.Module, inputs: dict[str, torch.Tensor], output) -> bool:
    """Whether the first token's logits change when every other token does (those like the first and last, the
    separators, kept): not so in a causal model, whose first token then cannot say "no answer" about the passage."""
    ids = inputs["input_ids"]
    kept = (ids == ids[:, :1]) | (ids == ids[:, -1:])  # the first and last tokens' kind: [CLS], [SEP] and the like
    changed = torch.where(kept, ids, ids[:, :1])
    with torch.no_grad():
        other = model(**without_cache(model, {**inputs, "input_ids": changed}))
    return not (torch.equal(other.start_logits[:, 0], output.start_logits[:, 0])
                and torch.equal(other.end_logits[:, 0], output.end_logits[:, 0]))
