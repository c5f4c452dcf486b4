"""What rcqa needs to know of an extractive-QA model to cut it at its layers, found from the model's own structure
and one recorded forward pass, never from a list of attribute paths per family.

A ModelAdapter says:
- the blocks, in the order they run (an encoder-decoder's encoder blocks, then its decoder's), and how each was
  called (rcqa.attribution.stack records the calls and replays them);
- the layers: the embeddings output (the hidden states the first block is called with), then each block's output;
- what runs after the last block before the QA head (a pre-LN model's final norm, ModernBERT's prediction head);
- the QA head, where it is a linear layer reading the last of those;
- how the model pools its tokens between blocks, where it does (Funnel): a pooled layer holds fewer states than
  there are tokens, and the adapter says which tokens each of its states pools (token_groups);
- whether the fast prefix-cached stack is used ("fast") or the model's own forward with one layer's states
  replaced ("general"), and why;
- whether the model's first token can read the input, which a "no answer" at [CLS] needs (rcqa.model.QAModel
  .null_token combines it with the tokenizer's layout).

Nothing here touches the shared model: the forward that discovers the order runs a private shallow copy whose
modules of interest are wrapped by recorders (rcqa.attribution.stack explains why not hooks).
"""
from __future__ import annotations

import copy
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import torch

ModuleT = TypeVar("ModuleT", bound=torch.nn.Module)  # a copy is of its model's own class (a transformers model's)

# Model types whose prefix-cached stack a test proves equal to the general path to 1e-6 (tests/models/test_adapter.py);
# any other family, or a checkpoint of these whose recorded forward is not a plain chain, takes the general path.
FAST_FAMILIES = frozenset({
    "albert", "bert", "camembert", "convbert", "data2vec-text", "deberta", "deberta-v2", "distilbert", "electra",
    "ernie", "ibert", "megatron-bert", "mobilebert", "modernbert", "mpnet", "rembert", "roberta",
    "roberta-prelayernorm", "roformer", "xlm-roberta", "xlm-roberta-xl", "llama", "mistral", "qwen2",
})


@dataclass
class Call:
    """One recorded call of a module: the hidden states it was given, the rest of its arguments, its output."""

    module: torch.nn.Module
    hidden: torch.Tensor
    args: tuple  # positional arguments after the hidden states
    kwargs: dict
    output: object

    @property
    def hidden_out(self) -> torch.Tensor:
        return first(self.output)


def first(output) -> torch.Tensor:
    """A module's hidden states out of whatever it returns: a tensor, a tuple led by them, or a dict of them first
    (SqueezeBERT's feature map)."""
    if isinstance(output, dict):
        return next(iter(output.values()))
    return output[0] if isinstance(output, (tuple, list)) else output


def with_first(output, hidden: torch.Tensor):
    """The block's output with its hidden states replaced (the same kind of container as it returned)."""
    if isinstance(output, dict):
        return {**output, next(iter(output)): hidden}
    return (hidden, *output[1:]) if isinstance(output, (tuple, list)) else hidden


def without_cache(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> dict:
    """The inputs, with use_cache=False where the model keeps a key-value cache: a cache recorded as a block's
    argument would grow on every replay."""
    return {**inputs, "use_cache": False} if getattr(model.config, "use_cache", False) else inputs


class StandIn(torch.nn.Module):
    """A module standing in for a shared one (`module`) in a private copy of the model; whatever else the model reads
    of it is read from the shared one (ModernBERT asks a layer its attention type)."""

    def __init__(self, module: torch.nn.Module):
        super().__init__()
        self.module = module

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["module"], name)


class Recorder(StandIn):
    """Stands in for one shared module in a private copy of the model: makes each call and hands it to `record`."""

    def __init__(self, module: torch.nn.Module, record: Callable[[Call], None]):
        super().__init__(module)
        self.record = record

    def forward(self, *args, **kwargs):
        output = self.module(*args, **kwargs)
        rest = dict(kwargs)
        hidden = args[0] if args else rest.pop("hidden_states", None)
        self.record(Call(self.module, hidden, tuple(args[1:]), rest, output))
        return output


def config_of(model: torch.nn.Module) -> Any:
    """A transformers model's config. Its fields differ by family (num_attention_heads, model_type, the attention
    implementation), and a module's attribute reads as Tensor | Module to a type checker, so it is read as Any."""
    return model.config


def with_replacements(model: ModuleT, replacements: dict[torch.nn.Module, torch.nn.Module]) -> ModuleT:
    """A shallow copy of model in which each key module runs its value instead, at every place it is registered (a
    block listed twice is called twice). Only the modules on the paths to them are copied (with child tables of
    their own; a copy on a later path copies the earlier copy, keeping its replacements); parameters and every other
    module are shared."""
    places: dict[int, list[str]] = {}
    for name, module in model.named_modules(remove_duplicate=False):
        places.setdefault(id(module), []).append(name)
    root = _shallow_copy(model)
    for module, replacement in replacements.items():
        for place in places[id(module)]:
            parent: torch.nn.Module = root
            *path, last = place.split(".")
            for name in path:
                child = parent._modules[name]
                assert child is not None  # a path named by named_modules() holds modules only
                parent._modules[name] = parent = _shallow_copy(child)
            parent._modules[last] = replacement
    return root


def _shallow_copy(module: ModuleT) -> ModuleT:
    clone = copy.copy(module)
    clone.__dict__["_modules"] = dict(module._modules)  # copy.copy would share the child table
    return clone


def block_lists(model: torch.nn.Module) -> list[tuple[str, torch.nn.ModuleList]]:
    """The model's lists of blocks: the outermost ModuleLists of callable modules (a list of lists, as Funnel's
    encoder keeps its blocks, counts as its inner lists), in the order they are registered."""
    found: list[tuple[str, torch.nn.ModuleList]] = []

    def visit(name: str, module: torch.nn.Module) -> None:
        if isinstance(module, torch.nn.ModuleList) and len(module):
            if all(isinstance(child, torch.nn.ModuleList) for child in module):
                for index, child in enumerate(module):
                    visit(f"{name}.{index}", child)
            else:
                found.append((name, module))
            return
        for child_name, child in module.named_children():
            visit(f"{name}.{child_name}" if name else child_name, child)

    visit("", model)
    if not found:
        raise ValueError(f"{type(model).__name__} has no list of blocks, so it has no layers to explain")
    return found


def _outside_blocks(model: torch.nn.Module, lists: list[torch.nn.ModuleList]) -> list[torch.nn.Module]:
    """The largest modules that neither hold a block list nor sit inside one: the embeddings, the final norms, the
    heads. Their order of calls, recorded, tells what runs after the last block."""
    holders = {id(m) for m in model.modules() if any(any(x is l for x in m.modules()) for l in lists)}
    found: list[torch.nn.Module] = []

    def visit(module: torch.nn.Module) -> None:
        for child in module.children():
            if any(child is l for l in lists):
                continue
            if id(child) in holders:
                visit(child)
            elif not any(child is f for f in found):
                found.append(child)

    visit(model)
    return found


@dataclass(frozen=True)
class ModelAdapter:
    """How rcqa cuts one model at its layers (the module's docstring)."""

    architecture: str
    model_type: str
    blocks: tuple[torch.nn.ModuleList, ...]  # the block lists, in the order they run
    block_names: tuple[str, ...]  # where each list sits in the model, e.g. "encoder.layer"
    labels: tuple[str, ...]  # "embeddings", then one per block call: "block 0" …, or "encoder block 0" …
    final: tuple[torch.nn.Module, ...]  # what runs between the last block and the QA head on its input, in order
    head: torch.nn.Module | None  # the QA head where it is a linear layer over the last of those, else None
    path: str  # "fast" (the prefix-cached stack) or "general" (the model's own forward, one layer replaced)
    why: str  # one sentence: why this path
    first_token_reads_input: bool  # False for a causal (decoder-only) model: its first token sees only itself
    axes: tuple[int, int, int] = (0, 1, 2)  # where the blocks keep batch, tokens, dim (XLNet: tokens first)
    pool: Callable[[torch.Tensor], torch.Tensor] | None = None  # the model's mean pooling of batch × tokens × dim

    def standard(self, hidden: torch.Tensor) -> torch.Tensor:
        """A block's hidden states as batch × tokens × dim."""
        return hidden.permute(self.axes)

    def native(self, hidden: torch.Tensor) -> torch.Tensor:
        """batch × tokens × dim states laid out as the blocks take them."""
        return hidden.permute(tuple(self.axes.index(i) for i in range(3)))

    @property
    def num_layers(self) -> int:
        """Block calls (an ALBERT's shared group counts once per call); the layers are these and the embeddings."""
        return len(self.labels) - 1

    def describe(self) -> str:
        blocks = " then ".join(f"{name} ({len(blocks)})" for name, blocks in zip(self.block_names, self.blocks))
        final = ", ".join(type(m).__name__ for m in self.final) or "nothing"
        pooled = ("; pools its tokens between blocks: at a pooled layer the tokens each state pools share its score "
                  "equally" if self.pool else "")
        return (f"{self.architecture}: blocks {blocks}; after the last block: {final}{pooled}; the {self.path} path "
                f"({self.why})")

    def token_groups(self, tokens: int, positions: int) -> torch.Tensor:
        """positions × tokens: row k spreads position k of a layer pooled down to `positions` states evenly over the
        tokens it pools (1/|group| each; a token no position pools, as Funnel's truncate_seq drops the last, has
        none). Found by pooling the identity with the model's own pooling until it has `positions` rows, so that
        Funnel's rules ([CLS] kept apart, the last token dropped, stride 2) are its own."""
        groups = torch.eye(tokens)[None]
        while groups.shape[1] > positions and self.pool is not None:
            pooled = self.pool(groups)
            if pooled.shape[1] == groups.shape[1]:
                break
            groups = pooled
        if groups.shape[1] != positions:
            raise ValueError(f"{self.architecture} pools its {tokens} tokens to {positions} states in a way rcqa "
                             "cannot map back onto the tokens, so that layer cannot be attributed token by token")
        covered = groups[0] > 0
        return covered / covered.sum(dim=1, keepdim=True)


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
    outside = _outside_blocks(model, lists)
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
