"""ModelAdapter: how rcqa cuts one model at its layers, as discovery found it (the package's docstring says what it
holds)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch


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
