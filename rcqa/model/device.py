"""Which device a model is loaded on."""
from __future__ import annotations

import os

import torch

from rcqa.model.qa_model import ModelLoadError


def pick_device(requested: str | None = None) -> torch.device:
    """The argument, else $RCQA_DEVICE, else CUDA when present, else the CPU."""
    choice = requested or os.environ.get("RCQA_DEVICE")
    if choice:
        device = torch.device(choice)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ModelLoadError(f"device {choice!r} was asked for but CUDA is not available here")
        return device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
