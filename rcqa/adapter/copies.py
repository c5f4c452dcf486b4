"""A private copy of a shared model in which some modules stand in for its own (StandIn; a Recorder records each
call): the shared model is never changed, and the copy shares its weights and every other module."""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TypeVar

import torch

from rcqa.adapter.calls import Call


ModuleT = TypeVar("ModuleT", bound=torch.nn.Module)  # a copy is of its model's own class (a transformers model's)


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
