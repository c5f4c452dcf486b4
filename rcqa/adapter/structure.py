"""Where a model keeps its blocks, found from its structure alone: its lists of blocks, and the largest modules
outside them (the embeddings, the final norms, the heads)."""
from __future__ import annotations

import torch


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


def outside_blocks(model: torch.nn.Module, lists: list[torch.nn.ModuleList]) -> list[torch.nn.Module]:
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
